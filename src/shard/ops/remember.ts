/** @module shard/ops/remember — stores new memories, their outgoing edges and, for a turn, its place in its conversation. */
import { invalid } from '../../errors/codes.ts';
import type { MemoryRecord, MemoryView } from '../../model/memory.ts';
import type { RememberItem } from '../../protocol/shard.ts';
import { memoryRecords } from './conversation.ts';
import { newMemory, view, type OpContext } from './context.ts';

export async function remember(
  ctx: OpContext,
  ws: string,
  input: { items: RememberItem[]; withEmbedding?: boolean },
): Promise<MemoryView[]> {
  const existing = ctx.state.workspaces.get(ws);
  for (const item of input.items) {
    for (const e of item.edges) {
      if (!existing?.memories.has(e.targetId))
        throw invalid(`edges: target_id ${e.targetId} does not exist in this workspace`);
    }
  }
  const now = ctx.nowUs();
  const w = ctx.state.workspace(ws);
  const created: MemoryRecord[] = [];
  const durable: Array<Promise<void>> = [];
  // One commit per memory: it is applied at once, so a later turn of the same conversation is placed after it.
  for (const item of input.items) {
    const m = newMemory(ctx, now, {
      ...item,
      expiresAt: item.ttlUs === undefined ? (item.expiresAt ?? null) : now + item.ttlUs,
    });
    created.push(m);
    durable.push(ctx.commit(memoryRecords(w, m, item, now)));
  }
  await Promise.all(durable);
  return created.map((m) => view(m, input.withEmbedding ?? false));
}
