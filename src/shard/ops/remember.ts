/** @module shard/ops/remember — stores new memories and their outgoing edges. */
import { invalid } from '../../errors/codes.ts';
import type { MemoryRecord, MemoryView } from '../../model/memory.ts';
import type { LiveRecord } from '../store/records.ts';
import type { RememberItem } from '../../protocol/shard.ts';
import { newMemory, view, type OpContext } from './context.ts';

export async function remember(ctx: OpContext, ws: string, input: { items: RememberItem[]; withEmbedding?: boolean }): Promise<MemoryView[]> {
  const existing = ctx.state.workspaces.get(ws);
  for (const item of input.items) {
    for (const e of item.edges) {
      if (!existing?.memories.has(e.targetId)) throw invalid(`edges: target_id ${e.targetId} does not exist in this workspace`);
    }
  }
  const now = ctx.nowUs();
  const records: LiveRecord[] = [];
  const created: MemoryRecord[] = [];
  for (const item of input.items) {
    const m = newMemory(ctx, now, { ...item, expiresAt: item.ttlUs === undefined ? (item.expiresAt ?? null) : now + item.ttlUs });
    created.push(m);
    records.push({ t: 'put', ws, m });
    for (const e of item.edges) {
      records.push({
        t: 'edge',
        ws,
        e: { source_id: m.id, target_id: e.targetId, edge_type: e.edgeType, confidence: e.confidence, timestamp_us: now },
      });
    }
  }
  await ctx.commit(records);
  return created.map((m) => view(m, input.withEmbedding ?? false));
}
