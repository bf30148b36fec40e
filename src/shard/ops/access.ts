/**
 * @module shard/ops/access — counts one access of each named memory still held (access_count + 1,
 * last_accessed_at now, logged lazily like a recall's): what a recall answered with when the
 * router, not the shard, chose its first result (a reranked recall, verbs/recall-rerank).
 */
import type { MemoryRecord } from '../../model/memory.ts';
import type { OpContext } from './context.ts';

export function access(ctx: OpContext, ws: string, input: { ids: string[] }): { accessed: number } {
  const w = ctx.state.workspaces.get(ws);
  const found: MemoryRecord[] = [];
  for (const id of input.ids) {
    const m = w?.memories.get(id);
    if (m) found.push(m);
  }
  ctx.touch(ws, found);
  return { accessed: found.length };
}
