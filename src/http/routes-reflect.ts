/**
 * @module http/routes-reflect — the routes of reflection and contradictions: a reflection run, and
 * the deprecated agent-side sessions (reflect prepare and commit, contradictions prepare and
 * commit) in which the calling agent's own model writes the insights and verdicts.
 */
import * as R from '../api/replies.ts';
import * as S from '../api/requests.ts';
import { withIso } from '../api/views.ts';
import * as reflection from '../verbs/reflect.ts';
import { ctxOf, route, type Route } from './route.ts';

const DEPRECATED = { deprecation: 'true' };

export const REFLECT_ROUTES: readonly Route[] = [
  route({
    method: 'POST',
    path: '/v1/reflect',
    op: 'reflect',
    scoped: true,
    summary: 'Cluster recent memories into insights now',
    body: S.ScopeBody,
    bodyOptional: true,
    reply: { status: 200, schema: R.ReflectResult },
    handle: async (i, { body }) => ({ body: await reflection.reflect(ctxOf(i), body) }),
  }),
  route({
    method: 'POST',
    path: '/v1/reflect/prepare',
    op: 'reflect_prepare',
    scoped: true,
    deprecated: true,
    summary: 'Agent-driven reflection, step 1: clusters and prompts',
    body: S.ScopeBody,
    bodyOptional: true,
    reply: { status: 200, schema: R.ReflectPrepareResult },
    handle: async (i, { body }) => {
      const out = await reflection.reflectPrepare(ctxOf(i), body);
      const clusters = out.clusters.map((c) => ({
        ...c,
        memories: c.memories.map((m) => withIso(m, ['created_at'])),
      }));
      return { body: { ...out, clusters }, headers: DEPRECATED };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/reflect/commit',
    op: 'reflect_commit',
    scoped: true,
    deprecated: true,
    summary: 'Agent-driven reflection, step 2: store the insights',
    body: S.ReflectCommitBody,
    reply: { status: 200, schema: R.ReflectCommitResult },
    handle: async (i, { body }) => ({
      body: await reflection.reflectCommit(ctxOf(i), body),
      headers: DEPRECATED,
    }),
  }),
  route({
    method: 'POST',
    path: '/v1/contradictions/prepare',
    op: 'contradiction_prepare',
    scoped: true,
    deprecated: true,
    summary: 'Contradiction candidates waiting for a verdict',
    reply: { status: 200, schema: R.PendingContradictions },
    handle: async (i) => ({
      body: (await reflection.contradictionPrepare(ctxOf(i))).map((p) =>
        withIso(p, ['created_at']),
      ),
      headers: DEPRECATED,
    }),
  }),
  route({
    method: 'POST',
    path: '/v1/contradictions/commit',
    op: 'contradiction_commit',
    scoped: true,
    deprecated: true,
    summary: 'Verdicts on contradiction candidates',
    body: S.VerdictsBody,
    reply: { status: 200, schema: R.VerdictResult },
    handle: async (i, { body }) => ({
      body: await reflection.contradictionCommit(ctxOf(i), body),
      headers: DEPRECATED,
    }),
  }),
];
