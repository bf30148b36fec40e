/**
 * @module native-bench/micro/lexical — what hybrid similarity costs inside the shard: recall p50/p99
 * (embedding excluded) for dense, hybrid and lexical similarity and for all four strategies, over a
 * workspace of real sentences with their real all-MiniLM-L6-v2 vectors; the lexical index's own
 * query costs (a remember's contradiction check, a whole memory's text as query; a recall's cue);
 * and its RAM per memory (heap and array-buffer growth while indexing, after GC).
 *
 *   node --expose-gc --import tsx native-bench/micro/lexical.ts [--quick] [--sizes 10000] [--query-sizes 10000,100000] [--ram-sizes 10000,100000]
 *
 * Cues are other sentences of the same corpus (not stored). The query and RAM rows index synthetic
 * memories of 20–40 words (the suite's corpus generator: a small vocabulary, so most words are in
 * many memories, and every memory has the same entity and context words).
 */
import { formatTable, type Cell } from '../lib/table.ts';
import { Rng } from '../lib/prng.ts';
import { sentence } from '../lib/corpus.ts';
import { runRecall } from '../../src/recall/recall.ts';
import { DEFAULT_WEIGHTS, type RecallInput, type StrategySpec } from '../../src/recall/types.ts';
import { LexicalIndex } from '../../src/shard/index/lexical.ts';
import { recallSource } from '../../src/shard/ops/recall-source.ts';
import { Workspace } from '../../src/shard/store/workspace.ts';
import { microFlags, numbersFlag, report } from './flags.ts';
import { measure } from './measure.ts';
import { BUSY_NOTE, loadCell } from './quiet.ts';
import { realSentences } from './real-corpus.ts';
import { realVectors } from './real-vectors.ts';

const CUES = 200;

function spec(strategy: StrategySpec['strategy']): StrategySpec {
  return {
    strategy,
    topK: 10,
    efSearch: 50,
    entityId: null,
    timeRange: null,
    seedId: null,
    edgeTypes: null,
    maxDepth: 5,
    alpha: 0.5,
  };
}

async function latency(sizes: number[], timeMs: number): Promise<void> {
  const max = Math.max(...sizes) + CUES;
  const vectors = await realVectors(max);
  const texts = realSentences(max, process.cwd());
  const rows: Cell[][] = [];
  for (const size of sizes) {
    if (size + CUES > vectors.length) {
      console.log(`  skipping ${size}: the machine has ${vectors.length} real sentences`);
      continue;
    }
    const w = new Workspace('bench');
    const now = Date.now() * 1000;
    for (let i = 0; i < size; i++) {
      const id = `${Math.floor(now / 1000)
        .toString(16)
        .padStart(12, '0')}${i.toString(16).padStart(20, '0')}`;
      w.put({
        id,
        content: texts[i] as string,
        importance: 0.5,
        context: {},
        entityId: null,
        kind: 'episode',
        createdAt: now,
        updatedAt: now,
        lastAccessedAt: now,
        accessCount: 0,
        logicalClock: 0,
        sourceMemoryIds: null,
        supersededBy: null,
        expiresAt: null,
        occurredAt: now,
        speaker: null,
        conversationId: null,
        messageId: null,
        embedding: vectors[i] as Float32Array,
      });
    }
    while (w.vectors.indexSome(1000));
    const src = recallSource(w);
    let next = 0;
    const cases: Array<[string, RecallInput['similarityMode'], StrategySpec[]]> = [
      ['similarity, dense (cosine only)', 'dense', [spec('similarity')]],
      ['similarity, hybrid (default)', 'hybrid', [spec('similarity')]],
      ['similarity, lexical', 'lexical', [spec('similarity')]],
      [
        'all four strategies, hybrid',
        'hybrid',
        [spec('similarity'), spec('temporal'), spec('causal'), spec('analogical')],
      ],
    ];
    for (const [name, mode, strategies] of cases) {
      const m = await measure(
        `${name} at ${size}`,
        () => {
          const i = size + (next++ % CUES);
          const input: RecallInput = {
            cue: vectors[i] as Float32Array,
            cueText: texts[i] as string,
            similarityMode: mode,
            cueContext: null,
            strategies,
            weights: DEFAULT_WEIGHTS,
            withEmbedding: false,
          };
          runRecall(src, input, now);
        },
        { timeMs, iterations: 400 },
      );
      rows.push([size, name, m.p50Ms, m.p99Ms, loadCell(m.quiet)]);
    }
  }
  report(
    'Recall inside the shard (embedding excluded), top_k 10, real sentences and vectors',
    formatTable(['memories', 'recall', 'p50 ms', 'p99 ms', 'load'], rows),
    'what the lexical index and the blend add to a recall',
    [BUSY_NOTE],
  );
}

/** Synthetic memories of 20–40 words (two generated sentences each), seeded. */
function syntheticDocs(size: number, rng: Rng): string[] {
  const docs: string[] = [];
  while (docs.length < size) {
    const text = `${sentence(rng)} ${sentence(rng)}`;
    const n = text.split(/\s+/).length;
    if (n >= 20 && n <= 40) docs.push(text);
  }
  return docs;
}

const CONTEXT = { source: 'chat', tags: ['billing', 'bug'] };

async function queries(sizes: number[], timeMs: number): Promise<void> {
  const rows: Cell[][] = [];
  for (const size of sizes) {
    const rng = new Rng(11);
    const docs = syntheticDocs(size, rng);
    const ids = docs.map((_, i) => i.toString(16).padStart(32, '0'));
    const idx = new LexicalIndex();
    docs.forEach((content, i) => {
      idx.add(ids[i] as string, { content, entityId: 'entity-7', context: CONTEXT });
    });
    let next = 0;
    const own = await measure(
      `contradiction query at ${size}`,
      () => {
        const j = (next++ * 7919) % size;
        idx.search(idx.query(docs[j] as string), 3, (id) => id !== ids[j]);
      },
      { timeMs, iterations: 100 },
    );
    rows.push([
      size,
      "remember's contradiction check: whole text, k 3",
      own.p50Ms,
      own.p99Ms,
      loadCell(own.quiet),
    ]);
    const cues = Array.from({ length: 50 }, () => sentence(rng));
    const recall = await measure(
      `recall query at ${size}`,
      () => {
        const s = idx.score(idx.query(cues[next++ % cues.length] as string, { typos: true }));
        s.top(30, null);
        for (let i = 0; i < 100; i++) s.norm(ids[(next * 31 + i * 997) % size] as string);
        s.union(ids.slice(next % (size - 5), (next % (size - 5)) + 5));
      },
      { timeMs, iterations: 100 },
    );
    rows.push([
      size,
      "recall's cue: typos, top 30, 100 norms, a union of 5",
      recall.p50Ms,
      recall.p99Ms,
      loadCell(recall.quiet),
    ]);
  }
  report(
    'Lexical queries alone (synthetic memories)',
    formatTable(['memories', 'query', 'p50 ms', 'p99 ms', 'load'], rows),
    'what one lexical query costs as the store grows',
    [BUSY_NOTE],
  );
}

/**
 * The JS heap plus array buffers (typed arrays over 64 bytes keep their contents outside the heap),
 * after collecting twice with a pause between: V8 frees array buffers' memory after the collection.
 */
async function heapAndBuffers(gc: () => void): Promise<number> {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 100));
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

async function ram(sizes: number[]): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) {
    console.log('\n(RAM rows need node --expose-gc)');
    return;
  }
  const rows: Cell[][] = [];
  for (const size of sizes) {
    const docs = syntheticDocs(size, new Rng(7));
    const words = docs.reduce((sum, text) => sum + text.split(/\s+/).length, 0);
    const ids = docs.map((_, i) => i.toString(16).padStart(32, '0'));
    const before = await heapAndBuffers(gc);
    const idx = new LexicalIndex();
    docs.forEach((content, i) => {
      idx.add(ids[i] as string, { content, entityId: 'entity-7', context: CONTEXT });
    });
    const after = await heapAndBuffers(gc);
    rows.push([size, words / size, idx.termCount, (after - before) / size]);
  }
  report(
    'Lexical index RAM',
    formatTable(['memories', 'words each', 'terms', 'bytes / memory'], rows),
    'heap and array-buffer growth per indexed memory (content, entity and two context values), target ≤ 1024',
  );
}

const { quick, values } = microFlags(['sizes', 'query-sizes', 'ram-sizes']);
await latency(numbersFlag(values, 'sizes', quick ? [2000] : [10_000]), quick ? 1000 : 4000);
await queries(
  numbersFlag(values, 'query-sizes', quick ? [10_000] : [10_000, 100_000]),
  quick ? 1000 : 3000,
);
await ram(numbersFlag(values, 'ram-sizes', quick ? [10_000] : [10_000, 100_000]));
