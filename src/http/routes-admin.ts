/**
 * @module http/routes-admin — the routes that run the service rather than a workspace's memories:
 * the calling key, cluster status, workspaces, API keys, backups, health and Prometheus metrics.
 * http/routes places them in its table after the workspace routes.
 */
import * as RA from '../api/admin-replies.ts';
import * as S from '../api/requests.ts';
import { withIso } from '../api/views.ts';
import { DEFAULT_WORKSPACE, SLUG_RE } from '../auth/principal.ts';
import { registry } from '../metrics/index.ts';
import * as admin from '../verbs/admin.ts';
import { backup } from '../verbs/backup.ts';
import { readiness, requireAdmin } from '../verbs/context.ts';
import { param, route, type Route } from './route.ts';

const SLUG = { slug: { description: 'Workspace slug', pattern: SLUG_RE.source } };

export const ADMIN_ROUTES: readonly Route[] = [
  route({
    method: 'GET',
    path: '/v1/auth/whoami',
    op: 'whoami',
    scoped: false,
    summary: 'The calling key: role, workspace, reach',
    reply: { status: 200, schema: RA.Whoami },
    handle: (i) => ({ body: admin.whoami(i.svc, i.principal) }),
  }),
  route({
    method: 'GET',
    path: '/v1/cluster',
    op: 'cluster_status',
    scoped: false,
    admin: true,
    summary: 'Cluster mode: nodes, partitions, owners, lag (404 when cluster mode is off)',
    reply: { status: 200, schema: RA.ClusterStatus },
    handle: async (i) => ({ body: await admin.clusterStatus(i.svc, i.principal) }),
  }),
  route({
    method: 'GET',
    path: '/v1/workspaces',
    op: 'workspaces_list',
    scoped: false,
    admin: true,
    summary: 'All workspaces with their memory counts',
    reply: { status: 200, schema: RA.WorkspaceList },
    handle: async (i) => ({
      body: {
        workspaces: (await admin.listWorkspaces(i.svc, i.principal)).map((w) =>
          withIso(w, ['created_at']),
        ),
      },
    }),
  }),
  route({
    method: 'POST',
    path: '/v1/workspaces',
    op: 'workspaces_create',
    scoped: false,
    admin: true,
    summary: 'Create a workspace and a workspace key for it',
    body: S.CreateWorkspaceBody,
    reply: { status: 201, schema: RA.WorkspaceCreated },
    handle: async (i, { body }) => {
      const out = await admin.createWorkspace(i.svc, i.principal, body);
      return { status: 201, body: { ...out, workspace: withIso(out.workspace, ['created_at']) } };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/workspaces/:slug',
    op: 'workspaces_get',
    scoped: false,
    admin: true,
    summary: 'One workspace',
    params: SLUG,
    reply: { status: 200, schema: RA.WorkspaceWithCount },
    handle: async (i) => ({
      body: withIso(await admin.getWorkspace(i.svc, i.principal, param(i, 'slug')), ['created_at']),
    }),
  }),
  route({
    method: 'PUT',
    path: '/v1/workspaces/:slug',
    op: 'workspaces_update',
    scoped: false,
    admin: true,
    body: S.UpdateWorkspaceBody,
    summary: 'Rename a workspace or set its default TTL (null removes it)',
    params: SLUG,
    reply: { status: 200, schema: RA.Workspace },
    handle: async (i, { body }) => ({
      body: withIso(await admin.updateWorkspace(i.svc, i.principal, param(i, 'slug'), body), [
        'created_at',
      ]),
    }),
  }),
  route({
    method: 'POST',
    path: '/v1/admin/backup',
    op: 'backup',
    scoped: false,
    admin: true,
    body: S.BackupBody,
    summary:
      "Online backup: a consistent copy of every shard into an empty directory on the server's machine",
    reply: { status: 200, schema: RA.BackupSummary },
    handle: async (i, { body }) => ({
      body: withIso(await backup({ svc: i.svc, principal: i.principal }, body), [
        'started_at',
        'finished_at',
      ]),
    }),
  }),
  route({
    method: 'DELETE',
    path: '/v1/workspaces/:slug',
    op: 'workspaces_delete',
    scoped: false,
    admin: true,
    summary: 'Delete a workspace, its memories and its keys (not the default one)',
    params: { slug: { ...SLUG.slug, except: [DEFAULT_WORKSPACE] } },
    reply: { status: 200, schema: RA.WorkspaceDeleted },
    handle: async (i) => ({
      body: await admin.deleteWorkspace(i.svc, i.principal, param(i, 'slug')),
    }),
  }),
  route({
    method: 'GET',
    path: '/v1/keys',
    op: 'keys_list',
    scoped: false,
    admin: true,
    summary: 'All API keys (never their secrets)',
    reply: { status: 200, schema: RA.KeyList },
    handle: (i) => ({
      body: { keys: admin.listKeys(i.svc, i.principal).map((k) => withIso(k, ['created_at'])) },
    }),
  }),
  route({
    method: 'POST',
    path: '/v1/keys',
    op: 'keys_create',
    scoped: false,
    admin: true,
    summary: 'Create an API key',
    body: S.CreateKeyBody,
    reply: { status: 201, schema: RA.KeyCreated },
    handle: async (i, { body }) => ({
      status: 201,
      body: withIso(await admin.createKey(i.svc, i.principal, body), ['created_at']),
    }),
  }),
  route({
    method: 'DELETE',
    path: '/v1/keys/:key_id',
    op: 'keys_revoke',
    scoped: false,
    admin: true,
    summary: 'Revoke an API key',
    params: {
      key_id: { description: 'Key id (key_ and 16 hex digits)', pattern: '^key_[0-9a-f]{16}$' },
    },
    reply: { status: 200, schema: RA.KeyRevoked },
    handle: async (i) => {
      const out = await admin.revokeKey(i.svc, i.principal, param(i, 'key_id'));
      return { body: { ...out, revoked: withIso(out.revoked, ['created_at']) } };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/health/live',
    op: 'health_live',
    scoped: false,
    access: 'health',
    summary: 'Liveness',
    reply: { status: 200, schema: RA.Health },
    handle: () => ({ body: { status: 'alive' } }),
  }),
  route({
    method: 'GET',
    path: '/v1/health/ready',
    op: 'health_ready',
    scoped: false,
    access: 'health',
    summary: 'Readiness (503 while starting or draining)',
    reply: { status: 200, schema: RA.Health, also: [503] },
    handle: (i) => {
      const h = readiness(i.svc);
      return h.ready
        ? { body: { status: 'ready' } }
        : { status: 503, body: { status: 'not_ready', reason: h.reason } };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/metrics',
    op: 'metrics',
    scoped: false,
    admin: true,
    summary: 'Prometheus metrics (server-wide figures: admin keys only)',
    reply: { status: 200, text: 'text/plain' },
    handle: async (i) => {
      requireAdmin(i);
      return {
        body: null,
        text: await registry.metrics(),
        headers: { 'content-type': registry.contentType },
      };
    },
  }),
];
