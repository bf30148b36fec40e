/** @module verbs/forget — remove memories matching all given criteria, or one memory by id (REST's DELETE). */
import { invalid, notFound } from '../errors/codes.ts';
import type { MemoryKind } from '../model/memory.ts';
import type { ForgetCriteria, ForgetResult } from '../protocol/shard.ts';
import { noteActivity } from './activity.ts';
import { memorySpan } from './memory-span.ts';
import { charge, type Ctx } from './context.ts';
import type { TimeInput } from '../model/time.ts';
import { checkEntity, checkId, checkNonNegative, checkTime, LIMITS } from './validate.ts';

export interface ForgetInput {
  memory_ids?: string[] | undefined;
  entity_id?: string | undefined;
  /** An absolute cutoff: memories last read before it (µs or ISO 8601). */
  staleness_threshold_us?: TimeInput | undefined;
  access_count_floor?: number | undefined;
  memory_kind?: MemoryKind | undefined;
  decay_score_floor?: number | undefined;
}

export async function forget(ctx: Ctx, input: ForgetInput): Promise<ForgetResult> {
  charge(ctx, 'write');
  const c: ForgetCriteria = {};
  if (input.memory_ids !== undefined) {
    if (input.memory_ids.length > LIMITS.forgetPerCall) {
      throw invalid(
        `memory_ids has ${input.memory_ids.length} ids; the limit is ${LIMITS.forgetPerCall}`,
      );
    }
    c.memoryIds = input.memory_ids.map((id, i) => checkId(`memory_ids[${i}]`, id));
  }
  if (input.entity_id !== undefined) c.entityId = checkEntity('entity_id', input.entity_id);
  if (input.staleness_threshold_us !== undefined)
    c.stalenessThresholdUs = checkTime('staleness_threshold_us', input.staleness_threshold_us);
  if (input.access_count_floor !== undefined)
    c.accessCountFloor = checkNonNegative('access_count_floor', input.access_count_floor);
  if (input.memory_kind !== undefined) c.memoryKind = input.memory_kind;
  if (input.decay_score_floor !== undefined)
    c.decayScoreFloor = checkNonNegative('decay_score_floor', input.decay_score_floor);
  if (Object.keys(c).length === 0) {
    throw invalid(
      'give at least one criterion: memory_ids, entity_id, staleness_threshold_us, access_count_floor, memory_kind or decay_score_floor',
    );
  }
  const result = await ctx.svc.shards.call(ctx.workspace, 'forget', c);
  const criteria = Object.entries(input)
    .filter(([k, v]) => v !== undefined && k !== 'memory_ids')
    .map(([k, v]) => `${k}=${String(v)}`);
  if (c.memoryIds)
    criteria.unshift(`${c.memoryIds.length} ${c.memoryIds.length === 1 ? 'id' : 'ids'}`);
  memorySpan(ctx.workspace, 'delete_memory', {
    count: result.tombstone_count,
    ...(c.memoryIds?.length === 1 ? { recordId: c.memoryIds[0] as string } : {}),
  });
  noteActivity(ctx, 'forget', {
    count: result.forgotten_count + result.cascade_count,
    memoryIds: c.memoryIds ?? [],
    detail: criteria.join(', '),
  });
  return result;
}

/**
 * Forgets one memory, as forget with `memory_ids: [id]` does (tombstone, its superseded versions
 * with it, insights rewritten or removed, content erased from disk within FLASHBULB_ERASE_WITHIN_S).
 * The id of a superseded version forgets that version alone. An id the workspace does not hold
 * (never stored, already forgotten) is not_found.
 */
export async function forgetMemory(ctx: Ctx, input: { id: string }): Promise<ForgetResult> {
  const id = checkId('memory_id', input.id);
  const out = await forget(ctx, { memory_ids: [id] });
  if (out.forgotten_count === 0) throw notFound(`memory ${id} not found`);
  return out;
}
