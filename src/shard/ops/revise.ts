/**
 * @module shard/ops/revise — revises a memory in place. The id stays; the previous state is kept
 * as a superseded version (new id, old kind, superseded_by = live id) linked live → version by a
 * revised_from edge.
 */
import { invalid } from '../../errors/codes.ts';
import type { MemoryRecord, MemoryView } from '../../model/memory.ts';
import type { LiveRecord } from '../store/records.ts';
import type { ReviseInput } from '../../protocol/shard.ts';
import { requireMemory, view, type OpContext } from './context.ts';

export async function revise(ctx: OpContext, ws: string, input: ReviseInput): Promise<MemoryView> {
  const w = ctx.state.workspaces.get(ws);
  const live = requireMemory(w, input.id);
  if (live.supersededBy !== null) {
    throw invalid(
      `memory ${live.id} is a superseded version; revise its live memory ${live.supersededBy}`,
    );
  }
  for (const e of input.edges) {
    if (!w?.memories.has(e.targetId))
      throw invalid(`edges: target_id ${e.targetId} does not exist in this workspace`);
  }
  const now = ctx.nowUs();
  // A version leaves with its live memory (forget's cascade), so it has no expiry of its own.
  const version: MemoryRecord = {
    ...live,
    id: ctx.ids.next(now / 1000),
    supersededBy: live.id,
    expiresAt: null,
  };
  const contentChanged = input.content !== undefined && input.content !== live.content;
  const next: MemoryRecord = {
    ...live,
    content: input.content ?? live.content,
    importance: input.importance ?? live.importance,
    context: mergeContext(live, input),
    entityId: input.entityId === undefined ? live.entityId : input.entityId,
    expiresAt:
      input.ttlUs !== undefined
        ? now + input.ttlUs
        : input.expiresAt === undefined
          ? live.expiresAt
          : input.expiresAt,
    kind: 'revision',
    updatedAt: now,
    logicalClock: live.logicalClock + 1,
    embedding: contentChanged && input.embedding ? input.embedding : live.embedding,
  };
  const records: LiveRecord[] = [
    { t: 'put', ws, m: version },
    { t: 'put', ws, m: next },
    {
      t: 'edge',
      ws,
      e: {
        source_id: live.id,
        target_id: version.id,
        edge_type: 'revised_from',
        confidence: 1,
        timestamp_us: now,
      },
    },
  ];
  for (const e of input.edges) {
    records.push({
      t: 'edge',
      ws,
      e: {
        source_id: live.id,
        target_id: e.targetId,
        edge_type: e.edgeType,
        confidence: e.confidence,
        timestamp_us: now,
      },
    });
  }
  await ctx.commit(records);
  return view(next, input.withEmbedding ?? false);
}

function mergeContext(live: MemoryRecord, input: ReviseInput): MemoryRecord['context'] {
  if (input.context === undefined) return live.context;
  return input.contextMode === 'replace' ? input.context : { ...live.context, ...input.context };
}
