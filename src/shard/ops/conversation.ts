/**
 * @module shard/ops/conversation — turns of a conversation: the records that put a new turn into
 * its conversation's `followed_by` chain (each turn → the turn just before it in event order,
 * spliced in when it lands between two), and ingest, which writes a conversation's messages in
 * order, skipping those whose message id the conversation already holds (a retried request): a
 * commit per message, so each is applied (and placed before the next) at once while the log's
 * appends share their syncs, in slices of SLICE_MS with other requests served between them.
 */
import type { MemoryRecord } from '../../model/memory.ts';
import type { IngestOutput, RememberItem } from '../../protocol/shard.ts';
import { nextTurn } from '../../threads/turn.ts';
import { DELETED_TAG } from '../store/ordered-ids.ts';
import type { LiveRecord } from '../store/records.ts';
import type { Workspace } from '../store/workspace.ts';
import { newMemory, type OpContext } from './context.ts';

/**
 * The records of a new memory: its put, its own edges, and, for a turn, the links that place it in
 * its conversation's chain, read from the state as it is now (so the memory must be committed
 * before the next one of the same conversation is planned).
 */
export function memoryRecords(
  w: Workspace | undefined,
  m: MemoryRecord,
  item: Pick<RememberItem, 'edges'>,
  now: number,
): LiveRecord[] {
  const ws = w?.slug ?? '';
  const records: LiveRecord[] = [{ t: 'put', ws, m }];
  for (const e of item.edges) {
    records.push({
      t: 'edge',
      ws,
      e: {
        source_id: m.id,
        target_id: e.targetId,
        edge_type: e.edgeType,
        confidence: e.confidence,
        timestamp_us: now,
      },
    });
  }
  if (w !== undefined && m.conversationId !== null) records.push(...chainLinks(w, m, now));
  return records;
}

/**
 * The `followed_by` edges that put `m` between the turns of its conversation just before and after
 * it in event order: m → before, after → m, and the edge after → before, if there was one, removed.
 */
function chainLinks(w: Workspace, m: MemoryRecord, now: number): LiveRecord[] {
  const c = w.conversations.get(m.conversationId as string);
  if (c === undefined) return [];
  const { ids, tags } = c.order.columns();
  const at = c.order.position(m.id, m.occurredAt);
  let before: string | undefined;
  let after: string | undefined;
  for (let i = at - 1; i >= 0 && before === undefined; i--)
    if (tags[i] !== DELETED_TAG) before = ids[i];
  for (let i = at; i < ids.length && after === undefined; i++)
    if (tags[i] !== DELETED_TAG && ids[i] !== m.id) after = ids[i];
  const ws = w.slug;
  const link = (source: string, target: string): LiveRecord => ({
    t: 'edge',
    ws,
    e: {
      source_id: source,
      target_id: target,
      edge_type: 'followed_by',
      confidence: 1,
      timestamp_us: now,
    },
  });
  const out: LiveRecord[] = [];
  if (before !== undefined) out.push(link(m.id, before));
  if (after !== undefined) {
    out.push(link(after, m.id));
    const spliced = before;
    if (
      spliced !== undefined &&
      w.graph.outgoing(after).some((e) => e.target_id === spliced && e.edge_type === 'followed_by')
    ) {
      out.push({ t: 'unedge', ws, s: after, d: spliced, y: 'followed_by' });
    }
  }
  return out;
}

/**
 * The `followed_by` edges that close the chain over turns being forgotten (`gone`): for each run of
 * them in a conversation, the turn after it → the turn before it, so the turns that stay are still
 * chained one to the next. Applied after the deletions (which remove the gone turns' edges).
 */
export function chainAfterLoss(w: Workspace, gone: ReadonlySet<string>, now: number): LiveRecord[] {
  const out: LiveRecord[] = [];
  const linked = new Set<string>();
  for (const id of gone) {
    const m = w.memories.get(id);
    const c = m?.conversationId == null ? undefined : w.conversations.get(m.conversationId);
    if (m === undefined || c === undefined || m.supersededBy !== null) continue;
    const { ids, tags } = c.order.columns();
    const at = c.order.position(m.id, m.occurredAt);
    const stays = (i: number): boolean => tags[i] !== DELETED_TAG && !gone.has(ids[i] as string);
    let before = at - 1;
    while (before >= 0 && !stays(before)) before -= 1;
    let after = at + 1;
    while (after < ids.length && !stays(after)) after += 1;
    if (before < 0 || after >= ids.length) continue;
    const [source, target] = [ids[after] as string, ids[before] as string];
    if (linked.has(source)) continue;
    linked.add(source);
    out.push({
      t: 'edge',
      ws: w.slug,
      e: {
        source_id: source,
        target_id: target,
        edge_type: 'followed_by',
        confidence: 1,
        timestamp_us: now,
      },
    });
  }
  return out;
}

/** Longest stretch an ingest holds the shard's thread before letting other requests run (as forget's scan). */
const SLICE_MS = 4;

/**
 * Writes the messages of one call in order. A message whose id its conversation already holds is
 * not written again: its memory's id comes back with `created` false. Every message is committed
 * as it is planned, so a later message of the call is placed after it; after SLICE_MS the op waits
 * a turn of the event loop (requests in between see the messages written so far, each whole).
 */
export async function ingest(
  ctx: OpContext,
  ws: string,
  input: { items: RememberItem[] },
): Promise<IngestOutput> {
  const out: IngestOutput = { ids: [], created: [] };
  const durable: Array<Promise<void>> = [];
  let deadline = performance.now() + SLICE_MS;
  for (const item of input.items) {
    if (performance.now() >= deadline) {
      await nextTurn();
      deadline = performance.now() + SLICE_MS;
    }
    // Read again after a wait: the workspace may have been dropped meanwhile.
    const w = ctx.state.workspace(ws);
    const existing =
      item.conversationId == null || item.messageId == null
        ? undefined
        : w.conversations.get(item.conversationId)?.messages.get(item.messageId);
    if (existing !== undefined) {
      out.ids.push(existing);
      out.created.push(false);
      continue;
    }
    const now = ctx.nowUs();
    const m = newMemory(ctx, now, {
      ...item,
      expiresAt: item.ttlUs === undefined ? (item.expiresAt ?? null) : now + item.ttlUs,
    });
    durable.push(ctx.commit(memoryRecords(w, m, item, now)));
    out.ids.push(m.id);
    out.created.push(true);
  }
  await Promise.all(durable);
  return out;
}
