/**
 * @module shard/ops/forget — removes memories matching every given criterion (AND), at most
 * FORGET_LIMIT per call, with their superseded versions (cascade) and edges, leaving one tombstone
 * per removed memory (content hash only) and asking for the compaction that erases it from disk;
 * the turns of a conversation that stay are chained again over the gap (ops/conversation).
 * Insights drawn from a removed memory are rewritten without it, or removed with it (ops/insight-sources).
 */
import { createHash } from 'node:crypto';
import { decayScore, type JsonObject, type MemoryRecord } from '../../model/memory.ts';
import type { LiveRecord } from '../store/records.ts';
import type { ForgetCriteria, ForgetResult } from '../../protocol/shard.ts';
import type { Workspace } from '../store/workspace.ts';
import type { OpContext } from './context.ts';
import { chainAfterLoss } from './conversation.ts';
import { insightsAfterLoss } from './insight-sources.ts';
import { nextTurn } from '../../threads/turn.ts';

export const FORGET_LIMIT = 1000;
/** Longest stretch a criteria scan holds the shard's thread before letting other requests run. */
const SCAN_SLICE_MS = 4;

export async function forget(
  ctx: OpContext,
  ws: string,
  criteria: ForgetCriteria,
): Promise<ForgetResult> {
  const empty: ForgetResult = {
    forgotten_count: 0,
    cascade_count: 0,
    truncated: false,
    tombstone_count: 0,
  };
  const now = ctx.nowUs();
  const scan = criteria.memoryIds
    ? byIds(ctx, ws, criteria, now)
    : await scanInSlices(ctx, ws, criteria, now);
  const w = ctx.state.workspaces.get(ws);
  if (!w || !scan) return empty;
  const { selected, truncated } = scan;
  const { records, cascaded, all } = forgetRecords(w, selected, criteriaJson(criteria), now);
  if (all === 0) return empty;
  await ctx.commit(records);
  ctx.requestErasure(records);
  return {
    forgotten_count: selected.length,
    cascade_count: cascaded,
    truncated,
    tombstone_count: all,
  };
}

interface Scan {
  selected: MemoryRecord[];
  truncated: boolean;
}

/** The memories named (live or superseded versions) that match the other criteria too. */
function byIds(ctx: OpContext, ws: string, c: ForgetCriteria, now: number): Scan | null {
  const w = ctx.state.workspaces.get(ws);
  if (!w) return null;
  const selected: MemoryRecord[] = [];
  let truncated = false;
  for (const id of new Set(c.memoryIds)) {
    const m = w.memories.get(id);
    if (!m || !matches(m, c, now)) continue;
    if (selected.length === FORGET_LIMIT) {
      truncated = true;
      break;
    }
    selected.push(m);
  }
  return { selected, truncated };
}

/**
 * The live memories matching every criterion (at most FORGET_LIMIT), read in creation order in
 * slices of SCAN_SLICE_MS with other requests served between them: a criteria forget reads the
 * workspace (or the entity's memories), and must not hold the shard while it does. Each slice
 * resumes after the last id read (ids sort by creation), so writes between slices cannot shift
 * it; what a slice selected is checked again at the end, as it may have changed meanwhile.
 */
async function scanInSlices(
  ctx: OpContext,
  ws: string,
  c: ForgetCriteria,
  now: number,
): Promise<Scan | null> {
  const picked: string[] = [];
  let cursor: string | null = null;
  let truncated = false;
  for (let more = true; more; ) {
    const w = ctx.state.workspaces.get(ws);
    const ids = c.entityId === undefined ? w?.order : w?.byEntity.get(c.entityId);
    if (!w || !ids) break;
    more = false;
    const deadline = performance.now() + SCAN_SLICE_MS;
    let n = 0;
    for (const id of ids.after(cursor)) {
      cursor = id;
      const m = w.memories.get(id);
      if (m && m.supersededBy === null && matches(m, c, now)) {
        if (picked.length === FORGET_LIMIT) {
          truncated = true;
          break;
        }
        picked.push(id);
      }
      if ((++n & 63) === 0 && performance.now() >= deadline) {
        more = true;
        break;
      }
    }
    if (more) await nextTurn();
  }
  const w = ctx.state.workspaces.get(ws);
  if (!w) return null;
  const selected: MemoryRecord[] = [];
  for (const id of picked) {
    const m = w.memories.get(id);
    // Criteria other than explicit ids select live memories; versions leave with them.
    if (m && m.supersededBy === null && matches(m, c, now)) selected.push(m);
  }
  return { selected, truncated };
}

/**
 * The log records that forget `selected` and, with them, their superseded versions: one `del`
 * and one tombstone (content hash only) per memory. Used by forget and by expiry.
 */
export function forgetRecords(
  w: Workspace,
  selected: readonly MemoryRecord[],
  criteria: JsonObject,
  now: number,
): { records: LiveRecord[]; cascaded: number; all: number } {
  const primary = new Set(selected.map((m) => m.id));
  const cascaded: MemoryRecord[] = [];
  for (const m of selected) {
    for (const vid of w.versions.get(m.id) ?? []) {
      const v = w.memories.get(vid);
      if (v && !primary.has(vid)) {
        cascaded.push(v);
        primary.add(vid);
      }
    }
  }
  const records: LiveRecord[] = [];
  for (const m of [...selected, ...cascaded]) {
    records.push({ t: 'del', ws: w.slug, id: m.id });
    records.push({
      t: 'tomb',
      ws: w.slug,
      tomb: { memory_id: m.id, forgotten_at: now, criteria, content_sha256: sha256(m.content) },
    });
  }
  // The turns that stay in a conversation stay chained one to the next.
  records.push(...chainAfterLoss(w, primary, now));
  // Insights quoting what goes are written again from their other sources, or go too.
  const loss = insightsAfterLoss(w, w.slug, primary, { now, criteria });
  records.push(...loss.records);
  return {
    records,
    cascaded: cascaded.length + loss.removed,
    all: selected.length + cascaded.length + loss.removed,
  };
}

function matches(m: MemoryRecord, c: ForgetCriteria, now: number): boolean {
  if (c.entityId !== undefined && m.entityId !== c.entityId) return false;
  if (c.stalenessThresholdUs !== undefined && !(m.lastAccessedAt < c.stalenessThresholdUs))
    return false;
  if (c.accessCountFloor !== undefined && !(m.accessCount < c.accessCountFloor)) return false;
  if (c.memoryKind !== undefined && m.kind !== c.memoryKind) return false;
  if (c.decayScoreFloor !== undefined && !(decayScore(m, now) < c.decayScoreFloor)) return false;
  return true;
}

function criteriaJson(c: ForgetCriteria): JsonObject {
  const out: JsonObject = {};
  if (c.memoryIds) out['memory_ids'] = c.memoryIds.length;
  if (c.entityId !== undefined) out['entity_id'] = c.entityId;
  if (c.stalenessThresholdUs !== undefined) out['staleness_threshold_us'] = c.stalenessThresholdUs;
  if (c.accessCountFloor !== undefined) out['access_count_floor'] = c.accessCountFloor;
  if (c.memoryKind !== undefined) out['memory_kind'] = c.memoryKind;
  if (c.decayScoreFloor !== undefined) out['decay_score_floor'] = c.decayScoreFloor;
  return out;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
