/**
 * @module native-bench/micro/store-fixture — a shard's records generated one at a time (nothing is
 * kept but the last 100 ids): memories with corpus sentences (40–300 characters), small contexts,
 * entity ids and clustered 384-d unit vectors (realistic for HNSW), each with one edge to one of
 * the 100 memories before it.
 */
import type { EdgeType } from '../../src/model/edge.ts';
import { IdGenerator } from '../../src/model/ids.ts';
import { toStored, type LogRecord } from '../../src/shard/store/records.ts';
import { rememberBody } from '../lib/corpus.ts';
import { Rng } from '../lib/prng.ts';
import { memory } from './graph-fixture.ts';
import { VectorSource } from './vectors.ts';

export const STORE_WS = 'bench';
const TYPES: readonly EdgeType[] = ['caused_by', 'followed_by', 'related_to'];

/** `n` memories and `n - 1` edges in workspace `ws`; `vector` sees each memory's vector. */
export function* storeRecords(
  n: number,
  seed: number,
  ws = STORE_WS,
  vector?: (id: string, v: Float32Array) => void,
): Generator<LogRecord> {
  const rng = new Rng(seed);
  const vectors = new VectorSource({ kind: 'clustered', dim: 384, seed });
  const gen = new IdGenerator();
  const t0 = Date.now() - n;
  const recent: string[] = [];
  for (let i = 0; i < n; i++) {
    const body = rememberBody(rng);
    const v = vectors.next();
    const m = {
      ...memory(gen.next(t0 + i), (t0 + i) * 1000, v, body.content),
      context: body.context,
      entityId: body.entity_id ?? null,
      importance: body.importance,
    };
    vector?.(m.id, v);
    yield { t: 'put', ws, m: toStored(m) };
    if (recent.length > 0) {
      const target = recent[recent.length - 1 - rng.int(recent.length)] as string;
      yield {
        t: 'edge',
        ws,
        e: {
          source_id: m.id,
          target_id: target,
          edge_type: rng.pick(TYPES),
          confidence: 0.8,
          timestamp_us: (t0 + i) * 1000,
        },
      };
    }
    recent.push(m.id);
    if (recent.length > 100) recent.shift();
  }
}
