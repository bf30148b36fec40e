/**
 * @module verbs/activity — the activity log: what changed (writes, revisions, forgets, imports,
 * uploads, insights and verdicts, workspaces and keys), when, by which key, in which workspace, in
 * a bounded ring in this process (the newest 10,000 entries: verbs/activity-log; a restart empties
 * it; in cluster mode each node keeps what its own verbs did). Entries hold memory ids, never
 * content: the listing reads the current content from the shards, only for workspaces the caller
 * may read, so a forgotten memory's text is nowhere in the log. Listing is for admin keys.
 */
import type { Principal } from '../auth/principal.ts';
import { FlashbulbError, invalid } from '../errors/codes.ts';
import type { ActivityAction } from '../model/activity.ts';
import type { ActivityEntry } from './activity-log.ts';
import { requireAdmin, type Ctx, type Services } from './context.ts';
import { intInRange } from './recall-options.ts';

const SNIPPET_CHARS = 200;

/** Records a change made through `ctx` (a data-plane verb). */
export function noteActivity(
  ctx: Ctx,
  action: ActivityAction,
  what: { count: number; memoryIds?: readonly string[]; detail?: string | null },
): void {
  noteAdminActivity(ctx.svc, ctx.principal, ctx.workspace, action, what);
}

/** Records a change to workspaces or keys (admin verbs), or any change with its principal. */
export function noteAdminActivity(
  svc: Services,
  p: Principal,
  workspace: string,
  action: ActivityAction,
  what: { count: number; memoryIds?: readonly string[]; detail?: string | null },
): void {
  const label =
    p.keyId === null ? null : (svc.auth.keys().find((k) => k.key_id === p.keyId)?.label ?? null);
  svc.activity.add({
    atUs: Date.now() * 1000,
    action,
    workspace,
    keyId: p.keyId,
    keyLabel: label,
    count: what.count,
    memoryIds: [...(what.memoryIds ?? [])],
    detail: what.detail ?? null,
  });
}

export interface ActivityQuery {
  workspace?: string | undefined;
  action?: ActivityAction | undefined;
  key_id?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

export interface ActivityView {
  entry: ActivityEntry;
  /** The memories' content now (clipped), where the caller may read the workspace: null when forgotten since. */
  contents: Map<string, string | null> | null;
}

/** A page of the log, newest first, with the memories' current content where the caller may read it. */
export async function listActivity(
  svc: Services,
  principal: Principal,
  q: ActivityQuery,
): Promise<{ entries: ActivityView[]; nextCursor: string | null; capacity: number }> {
  requireAdmin({ principal });
  const limit = intInRange('limit', q.limit, 50, 1, 500, { cap: true });
  let before: number | null = null;
  if (q.cursor !== undefined) {
    if (!/^\d{1,15}$/.test(q.cursor))
      throw invalid(
        `cursor '${q.cursor.slice(0, 40)}' is not an activity cursor: pass the next_cursor of the previous page`,
      );
    before = Number(q.cursor);
  }
  const keep = (e: ActivityEntry): boolean =>
    (q.workspace === undefined || e.workspace === q.workspace) &&
    (q.action === undefined || e.action === q.action) &&
    (q.key_id === undefined || e.keyId === q.key_id);
  const { entries, next } = svc.activity.page(before, limit, keep);
  const readable = (ws: string): boolean =>
    principal.role === 'admin' || principal.workspace === ws;
  const byWs = new Map<string, Set<string>>();
  for (const e of entries) {
    if (!readable(e.workspace) || e.memoryIds.length === 0) continue;
    const ids = byWs.get(e.workspace) ?? new Set<string>();
    for (const id of e.memoryIds) ids.add(id);
    byWs.set(e.workspace, ids);
  }
  const found = new Map<string, Map<string, string>>();
  await Promise.all(
    [...byWs].map(async ([ws, ids]) => {
      const exists = svc.auth.workspace(ws) !== undefined || !svc.config.authEnabled;
      const got = exists
        ? await svc.shards
            .call(ws, 'batchGet', { ids: [...ids], withEmbedding: false })
            .catch((err: unknown) => (err instanceof FlashbulbError ? [] : Promise.reject(err)))
        : [];
      found.set(
        ws,
        new Map(
          got.map((m) => [
            m.id,
            m.content.length > SNIPPET_CHARS
              ? `${m.content.slice(0, SNIPPET_CHARS - 1)}…`
              : m.content,
          ]),
        ),
      );
    }),
  );
  const views = entries.map((entry) => {
    const have = found.get(entry.workspace);
    if (!readable(entry.workspace) || entry.memoryIds.length === 0)
      return { entry, contents: null };
    return { entry, contents: new Map(entry.memoryIds.map((id) => [id, have?.get(id) ?? null])) };
  });
  return {
    entries: views,
    nextCursor: next === null ? null : String(next),
    capacity: svc.activity.capacity,
  };
}
