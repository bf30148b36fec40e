/**
 * @module native-bench/micro/contradiction-fixture — a workspace of corpus statements and a stream
 * of new statements about them: each new one is close to an existing memory (cosine ≈ 0.9) and
 * either negates it, changes its number, or restates it (two thirds contradict) — so the after-write contradiction check
 * finds real neighbours and real contradictions.
 */
import { mkdirSync } from 'node:fs';
import { IdGenerator } from '../../src/model/ids.ts';
import { toStored, type LogRecord } from '../../src/shard/store/records.ts';
import { writeSnapshot } from '../../src/shard/persist/snapshot.ts';
import type { RememberItem } from '../../src/protocol/shard.ts';
import { sentence } from '../lib/corpus.ts';
import { Rng } from '../lib/prng.ts';
import { memory } from './graph-fixture.ts';
import { stateOf, WS } from './shard-fixture.ts';
import { gaussian, normalise, VectorSource } from './vectors.ts';

export interface Statement {
  content: string;
  vector: Float32Array;
}

export function baseStatements(n: number, seed: number): Statement[] {
  const rng = new Rng(seed);
  const source = new VectorSource({ kind: 'clustered', dim: 384, seed });
  return Array.from({ length: n }, () => ({ content: sentence(rng), vector: source.next() }));
}

/** Writes the statements as a snapshot in `dir`, so a Shard opened there starts with them. */
export async function seedShardDir(dir: string, statements: readonly Statement[]): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const ids = new IdGenerator();
  const t0 = Date.now() - statements.length;
  const records: LogRecord[] = statements.map((s, i) => ({
    t: 'put',
    ws: WS,
    m: toStored(memory(ids.next(t0 + i), (t0 + i) * 1000, s.vector, s.content)),
  }));
  await writeSnapshot(dir, { shard: 0, walSeq: 1, state: stateOf(records) });
}

function near(v: Float32Array, rng: Rng): Float32Array {
  const out = Float32Array.from(v, (x) => x + gaussian(rng) * 0.025);
  return normalise(out);
}

/** New statements about random existing ones: a third negated, a third renumbered, a third restated. */
export function newItems(base: readonly Statement[], n: number, seed: number): RememberItem[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const s = base[rng.int(base.length)] as Statement;
    const content =
      i % 3 === 0
        ? `It is not true that ${s.content.charAt(0).toLowerCase()}${s.content.slice(1)}`
        : i % 3 === 1
          ? s.content.replace(/\(ref \d+\)/, `(ref ${rng.int(100_000)})`)
          : `As noted before: ${s.content}`;
    return {
      content,
      importance: 0.5,
      context: { source: 'bench' },
      entityId: null,
      kind: 'episode',
      embedding: near(s.vector, rng),
      edges: [],
    };
  });
}
