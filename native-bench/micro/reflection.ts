/**
 * @module native-bench/micro/reflection — the CPU-heavy half of reflection (reflect/task.ts
 * analyse: average-linkage clustering on a sample of 1,500, the rest assigned to the nearest theme,
 * central statements, distinguishing terms) on 1k
 * and 10k episodes: 384-d vectors around 8 themes with texts whose words follow their theme, and
 * 10% off-topic episodes (random vectors, words of a random theme) that belong to no theme.
 *
 *   node --import tsx native-bench/micro/reflection.ts [--quick] [--sizes 1000,10000]
 */
import { Rng } from '../lib/prng.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { analyse, type ClusterResult, type ReflectTaskInput } from '../../src/analysis/task.ts';
import { microFlags, numbersFlag, report } from './flags.ts';
import { measure } from './measure.ts';
import { BUSY_NOTE, loadCell } from './quiet.ts';
import { THEME_COUNT, themedEpisode } from './texts.ts';
import { VectorSource } from './vectors.ts';

const DIM = 384;
/** Share of off-topic episodes. */
const NOISE = 0.1;

function episodes(n: number, seed: number): { input: ReflectTaskInput; themes: number[] } {
  const rng = new Rng(seed);
  const source = new VectorSource({ kind: 'clustered', dim: DIM, seed, centres: THEME_COUNT });
  const noise = new VectorSource({ kind: 'random', dim: DIM, seed: seed + 1 });
  const vectors = new Float32Array(n * DIM);
  const texts: string[] = [];
  const themes: number[] = [];
  for (let i = 0; i < n; i++) {
    const offTopic = rng.next() < NOISE;
    const t = rng.int(THEME_COUNT);
    vectors.set(offTopic ? noise.next() : source.next(t), i * DIM);
    texts.push(themedEpisode(rng, offTopic ? rng.int(THEME_COUNT * 4) : t));
    themes.push(offTopic ? -1 : t);
  }
  return { input: { vectors, dim: DIM, texts }, themes };
}

/** Share of clustered episodes whose cluster's majority theme is their own. */
function purity(clusters: readonly ClusterResult[], themes: readonly number[]): number {
  let agree = 0;
  let total = 0;
  for (const c of clusters) {
    const counts = new Map<number, number>();
    for (const i of c.members) counts.set(themes[i] ?? -1, (counts.get(themes[i] ?? -1) ?? 0) + 1);
    counts.delete(-1);
    agree += Math.max(0, ...counts.values());
    total += c.members.length;
  }
  return total === 0 ? 0 : agree / total;
}

async function main(): Promise<void> {
  const { quick, values } = microFlags(['sizes']);
  const sizes = numbersFlag(values, 'sizes', quick ? [1000] : [1000, 10_000]);
  const rows: Cell[][] = [];
  for (const n of sizes) {
    const { input, themes } = episodes(n, 17);
    let clusters: ClusterResult[] = [];
    const m = await measure(`analyse ${n}`, () => void (clusters = analyse(input)), {
      timeMs: 0,
      iterations: quick ? 2 : 5,
      warmup: 1,
    });
    const clustered = clusters.reduce((s, c) => s + c.members.length, 0);
    rows.push([
      n,
      m.p50Ms / 1000,
      m.p99Ms / 1000,
      clusters.length,
      clustered / n,
      purity(clusters, themes),
      clusters[0]?.tags.slice(0, 3).join(' ') ?? '-',
      loadCell(m.quiet),
    ]);
  }
  report(
    `Reflection analysis (reflect/task.ts analyse, one thread, ${THEME_COUNT} themes)`,
    formatTable(
      [
        'episodes',
        'p50 s',
        'max s',
        'clusters',
        'clustered',
        'purity',
        'tags of the largest',
        'load',
      ],
      rows,
    ),
    'how long the clustering and summarising half of a reflection holds its worker thread for 1k and 10k episodes, and that it finds the themes.',
    [
      BUSY_NOTE,
      'p99 of a handful of runs is their maximum; clustered = share of episodes placed in a cluster (90% are on a theme); purity = share of clustered episodes in a cluster whose majority theme is theirs',
    ],
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
