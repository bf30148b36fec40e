/**
 * @module shard/ops/conversation — turns of a conversation: the records that put a new turn into
 * its conversation's `followed_by` chain (each turn → the turn just before it in event order,
 * spliced in when it lands between two).
 */
import type { MemoryRecord } from '../../model/memory.ts';
import type { RememberItem } from '../../protocol/shard.ts';
import { DELETED_TAG } from '../store/ordered-ids.ts';
import type { LiveRecord } from '../store/records.ts';
import type { Workspace } from '../store/workspace.ts';

/**
 * The records of a new memory: its put, its own edges, and, for a turn, the links that place it in
 * its conversation's chain, read from the state as it is now (so the memory must be committed
 * before the next one of the same conversation is planned).
 */
export function memoryRecords(w: Workspace | undefined, m: MemoryRecord, item: Pick<RememberItem, 'edges'>, now: number): LiveRecord[] {
  const ws = w?.slug ?? '';
  const records: LiveRecord[] = [{ t: 'put', ws, m }];
  for (const e of item.edges) {
    records.push({ t: 'edge', ws, e: { source_id: m.id, target_id: e.targetId, edge_type: e.edgeType, confidence: e.confidence, timestamp_us: now } });
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
  for (let i = at - 1; i >= 0 && before === undefined; i--) if (tags[i] !== DELETED_TAG) before = ids[i];
  for (let i = at; i < ids.length && after === undefined; i++) if (tags[i] !== DELETED_TAG && ids[i] !== m.id) after = ids[i];
  const ws = w.slug;
  const link = (source: string, target: string): LiveRecord => ({ t: 'edge', ws, e: { source_id: source, target_id: target, edge_type: 'followed_by', confidence: 1, timestamp_us: now } });
  const out: LiveRecord[] = [];
  if (before !== undefined) out.push(link(m.id, before));
  if (after !== undefined) {
    out.push(link(after, m.id));
    const spliced = before;
    if (spliced !== undefined && w.graph.outgoing(after).some((e) => e.target_id === spliced && e.edge_type === 'followed_by')) {
      out.push({ t: 'unedge', ws, s: after, d: spliced, y: 'followed_by' });
    }
  }
  return out;
}
