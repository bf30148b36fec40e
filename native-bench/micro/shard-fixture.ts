/**
 * @module native-bench/micro/shard-fixture — shard state as log records: `put` records of
 * memories with corpus sentences and 384-d vectors, plus one edge per memory to an earlier one,
 * applied through applyRecord as replay does.
 */
import { IdGenerator } from '../../src/model/ids.ts';
import type { EdgeType } from '../../src/model/edge.ts';
import { toStored, type LogRecord } from '../../src/shard/store/records.ts';
import { applyRecord, ShardState } from '../../src/shard/store/apply.ts';
import { rememberBody } from '../lib/corpus.ts';
import { Rng } from '../lib/prng.ts';
import { memory } from './graph-fixture.ts';
import { VectorSource } from './vectors.ts';

export const WS = 'bench';
const TYPES: readonly EdgeType[] = ['caused_by', 'followed_by', 'related_to'];

/** `n` memories and `n - 1` edges, as the records a snapshot of them holds. */
export function shardRecords(n: number, seed: number): LogRecord[] {
  const rng = new Rng(seed);
  const vectors = new VectorSource({ kind: 'clustered', dim: 384, seed });
  const ids = new IdGenerator();
  const t0 = Date.now() - n;
  const out: LogRecord[] = [];
  const memIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const body = rememberBody(rng);
    const m = {
      ...memory(ids.next(t0 + i), (t0 + i) * 1000, vectors.next(), body.content),
      context: body.context,
      entityId: body.entity_id ?? null,
    };
    memIds.push(m.id);
    out.push({ t: 'put', ws: WS, m: toStored(m) });
  }
  for (let i = 1; i < n; i++) {
    const target = memIds[i - 1 - rng.int(Math.min(i, 100))] as string;
    out.push({
      t: 'edge',
      ws: WS,
      e: {
        source_id: memIds[i] as string,
        target_id: target,
        edge_type: rng.pick(TYPES),
        confidence: 0.8,
        timestamp_us: (t0 + i) * 1000,
      },
    });
  }
  return out;
}

export function stateOf(records: readonly LogRecord[]): ShardState {
  const state = new ShardState();
  for (const r of records) applyRecord(state, r);
  return state;
}
