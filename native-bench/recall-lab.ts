/**
 * @module native-bench/recall-lab — retrieval quality measured in process: the same datasets, memories,
 * questions and measure as bench:retrieval (native-bench/retrieval.ts), but each conversation is
 * written straight into a shard's state (`put` records, as an import writes them) and asked
 * through the shard's own recall op (shard/ops/recall.ts), with the model's vectors read from a
 * cache on disk (lib/embed-cache.ts). No server, no model run after the first: a LoCoMo pass takes
 * seconds and a LifeBench pass well under a minute, for developing the ranker; figures that go in
 * commit messages and the docs come from bench:retrieval, which this agrees with.
 *
 * Access counts are kept as the shard keeps them (each result of each recall counts once), in the
 * order bench:retrieval asks (every question at top_k 10, then every question at 25). A question
 * with an `ask_time` (LifeBench) is asked at the end of that month (`asked_at_us`); the others now.
 *
 *   node --import tsx native-bench/recall-lab.ts [--data FILE] [--configs hybrid,all]
 *        [--extra '{"scoring_weights":{...}}'] [--conversations 0,2] [--dump FILE] [--dump-k 200]
 *        [--misses FILE]   # per question: the rank of each evidence turn in the first 200
 *        [--hybrid '{"time":0.5}']   # hybrid feature weights to try (recall/hybrid.ts HYBRID_WEIGHTS)
 *        [--gather '{"weight":0}']   # feedback for list and count cues to try (recall/gather.ts GATHER)
 *        [--prev-field all|replies]   # the turn before as a lexical field (docs/benchmarks.md: dropped)
 *        [--expand N]   # cues followed by N WordNet synonyms per word (experiments/wordnet-expand.ts)
 *        [--ctx-view W]   # a second dense view: each turn written after the turn before it (same
 *                         # conversation, within the neighbour gap), embedded by the model; the
 *                         # dense search takes the nearest of both views, each memory once, at
 *                         # max(cos(turn), W × cos(context view)) (docs/benchmarks.md: dropped)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { IdGenerator } from '../src/model/ids.ts';
import type { MemoryRecord } from '../src/model/memory.ts';
import { GATHER } from '../src/recall/gather.ts';
import { contextText, withContextView } from './experiments/context-view.ts';
import { wordnetExpander } from './experiments/wordnet-expand.ts';
import { DENSITY, HYBRID_WEIGHTS, type Weights } from '../src/recall/hybrid.ts';
import { WINDOW } from '../src/shard/index/density.ts';
import {
  DEFAULT_WEIGHTS,
  type RecallInput,
  type ScoringWeights,
  type SimilarityMode,
  type StrategyName,
  type StrategySpec,
} from '../src/recall/types.ts';
import { applyRecord, ShardState } from '../src/shard/store/apply.ts';
import { toStored } from '../src/shard/store/records.ts';
import type { OpContext } from '../src/shard/ops/context.ts';
import { recall } from '../src/shard/ops/recall.ts';
import { listFlag, numberFlag, stringFlag } from './lib/args.ts';
import { EmbedCache } from './lib/embed-cache.ts';
import {
  askedAtUs,
  categoryNames,
  scoredQuestions,
  share,
  turnId,
  turnsOf,
  type Conversation,
  type TurnMemory,
} from './lib/retrieval-data.ts';
import { perCategoryFolds, printFolds, type QuestionScore } from './lib/retrieval-folds.ts';

const DIM = 384;
const KS = [5, 10, 25] as const;

interface LabConfig {
  name: string;
  strategies: StrategyName[];
  mode: SimilarityMode;
}

const CONFIGS: readonly LabConfig[] = [
  { name: 'hybrid', strategies: ['similarity'], mode: 'hybrid' },
  { name: 'dense', strategies: ['similarity'], mode: 'dense' },
  { name: 'lexical', strategies: ['similarity'], mode: 'lexical' },
  { name: 'all', strategies: ['similarity', 'temporal', 'causal', 'analogical'], mode: 'hybrid' },
];

const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    configs: { type: 'string' },
    conversations: { type: 'string' },
    extra: { type: 'string' },
    dump: { type: 'string' },
    'dump-k': { type: 'string' },
    misses: { type: 'string' },
    hybrid: { type: 'string' },
    density: { type: 'string' },
    gather: { type: 'string' },
    'prev-field': { type: 'string' },
    expand: { type: 'string' },
    'ctx-view': { type: 'string' },
    window: { type: 'string' },
    quiet: { type: 'boolean' },
    out: { type: 'string' },
  },
});

const dataPath = resolve(stringFlag(values, 'data') ?? '../shared/data/locomo-dev.json');
if (!existsSync(dataPath)) {
  console.log(
    `recall-lab skipped: no dataset at ${dataPath} (LoCoMo-format JSON; see ../shared/data/README.md). Pass --data FILE.`,
  );
  process.exit(0);
}
const all = JSON.parse(readFileSync(dataPath, 'utf8')) as Conversation[];
const names = categoryNames(all);
const picked = listFlag(
  values,
  'conversations',
  all.map((_, i) => String(i)),
).map(Number);
const configs = listFlag(values, 'configs', ['hybrid']).map((n) => {
  const c = CONFIGS.find((x) => x.name === n);
  if (!c)
    throw new Error(
      `--configs: unknown configuration '${n}'; use ${CONFIGS.map((x) => x.name).join(', ')}`,
    );
  return c;
});
const extra = JSON.parse(stringFlag(values, 'extra') ?? '{}') as {
  scoring_weights?: Partial<ScoringWeights>;
};
const weights: ScoringWeights = { ...DEFAULT_WEIGHTS, ...extra.scoring_weights };
const dumpK = numberFlag(values, 'dump-k', 200);
// Trying other feature weights: the shard reads this object, so changing it here changes what it ranks by.
Object.assign(
  HYBRID_WEIGHTS as Weights,
  JSON.parse(stringFlag(values, 'hybrid') ?? '{}') as Partial<Weights>,
);
Object.assign(
  DENSITY,
  JSON.parse(stringFlag(values, 'density') ?? '{}') as Partial<typeof DENSITY>,
);
Object.assign(GATHER, JSON.parse(stringFlag(values, 'gather') ?? '{}') as Partial<typeof GATHER>);
WINDOW.n = numberFlag(values, 'window', WINDOW.n);
const cache = new EmbedCache(DIM);
const expandN = numberFlag(values, 'expand', 0);
const ctxW = numberFlag(values, 'ctx-view', 0);
const expand = expandN > 0 ? wordnetExpander(expandN) : (cue: string): string => cue;

/** Time spent computing densities, and for how many memories (printed beside the recall p50). */
const densityCost = { ms: 0, n: 0 };
const dumpRows: Array<Record<string, unknown>> = [];
/** The similarity details of the last deep ask's results (for `--dump`). */
let lastDetails: object[] = [];
const missRows: Array<Record<string, unknown>> = [];
const report: Record<string, unknown> = {
  data: dataPath,
  conversations: picked,
  weights,
  hybrid: { ...HYBRID_WEIGHTS },
  configs: {},
};

for (const config of configs) {
  const scores: QuestionScore[] = [];
  const latencies: number[] = [];
  for (const convIndex of picked) {
    const conv = all[convIndex];
    if (!conv) throw new Error(`--conversations: no conversation ${convIndex}`);
    const turns = turnsOf(conv, false);
    const questions = scoredQuestions(conv, names);
    const turnVectors = await cache.vectors(
      turns.map((t) => t.content),
      (d, n) =>
        values.quiet ||
        process.stdout.write(`\r  embedding turns of conversation ${convIndex}: ${d}/${n}`),
    );
    const cues = await cache.vectors(questions.map(({ q }) => q.question));
    const ctxTexts = turns.map((_, i) => contextText(turns, i));
    const ctxVectors =
      ctxW > 0
        ? await cache.vectors(
            ctxTexts.filter((x): x is string => x !== null),
            (d, n) =>
              values.quiet ||
              process.stdout.write(
                `\r  embedding context views of conversation ${convIndex}: ${d}/${n}`,
              ),
          )
        : [];
    let next = 0;
    const ctxOf = ctxTexts.map((x) => (x === null ? undefined : ctxVectors[next++]));
    const { ctx, diaOf } = workspaceOf(turns, turnVectors, ctxOf);
    const ask = (qi: number, k: number, deep = false): Array<string | undefined> => {
      const { q } = questions[qi] as (typeof questions)[number];
      const t0 = performance.now();
      const input = {
        ...inputOf(config, cues[qi] as Float32Array, expand(q.question), k, deep),
        askedAtUs: q.ask_time === undefined ? null : askedAtUs(q, 0),
      };
      const out = recall(ctx, 'lab', input);
      if (k === 10) latencies.push(performance.now() - t0);
      if (deep)
        lastDetails = out.results.map(
          (r) => r.strategy_details.find((d) => d.strategy === 'similarity') ?? {},
        );
      return out.results.map((r) => diaOf.get(r.memory.id));
    };
    const at = questions.map(({ q }, i) => {
      if (values.dump || values.misses) {
        const found = ask(i, dumpK, true);
        // The deep ask is itself an access: undo it so the measured passes see what bench:retrieval's do.
        ctx.untouchLast();
        if (values.misses) missRows.push(missRow(convIndex, questions[i]?.qi ?? i, q, found));
        if (values.dump) {
          const results = found.map((turn, j) => {
            const {
              strategy: _s,
              distance: _d,
              ...features
            } = (lastDetails[j] ?? {}) as Record<string, unknown>;
            return { turn, hit: q.evidence.includes(turn ?? ''), ...features };
          });
          dumpRows.push({
            config: config.name,
            conv: convIndex,
            qi: questions[i]?.qi,
            category: q.category,
            evidence: new Set(q.evidence).size,
            results,
          });
        }
      }
      const top = ask(i, 10);
      return [share(q.evidence, top.slice(0, 5)), share(q.evidence, top)];
    });
    questions.forEach(({ q }, i) => {
      at[i]?.push(share(q.evidence, ask(i, 25)));
    });
    questions.forEach(({ q }, i) => {
      scores.push({ conv: convIndex, category: q.category, at: at[i] ?? [] });
    });
  }
  if (!values.quiet) process.stdout.write('\n');
  const sorted = Float64Array.from(latencies).sort();
  console.log(
    `\n## ${config.name}  (in-process recall, top_k 10: p50 ${(sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(2)} ms; densities ${((1000 * densityCost.ms) / Math.max(1, densityCost.n)).toFixed(0)} µs a memory)`,
  );
  const folds = perCategoryFolds(scores, names, KS.length);
  printFolds(folds, names, KS);
  (report.configs as Record<string, unknown>)[config.name] = folds;
}

if (values.dump)
  writeFileSync(String(values.dump), `${dumpRows.map((r) => JSON.stringify(r)).join('\n')}\n`);
if (values.misses)
  writeFileSync(String(values.misses), `${missRows.map((r) => JSON.stringify(r)).join('\n')}\n`);
const out = stringFlag(values, 'out');
if (out) {
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
}

/**
 * `deep` (the `--dump` and `--misses` asks): ordered by relevance alone, since the composite score
 * reorders a similarity list only within its top_k (recency and reinforcement would decide the
 * order of 200 results, not the ranking that picks a top 10).
 */
function inputOf(
  config: LabConfig,
  cue: Float32Array,
  cueText: string,
  topK: number,
  deep = false,
): RecallInput {
  const spec = (strategy: StrategyName): StrategySpec => ({
    strategy,
    topK,
    efSearch: 50,
    entityId: null,
    timeRange: null,
    seedId: null,
    edgeTypes: null,
    maxDepth: 5,
    alpha: 0.5,
  });
  const w = deep
    ? { ...weights, w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 }
    : weights;
  return {
    cue,
    cueText,
    similarityMode: config.mode,
    cueContext: null,
    strategies: config.strategies.map(spec),
    weights: w,
    withEmbedding: false,
    filter: null,
  };
}

/** A shard state holding the turns as one workspace (as an import writes them), and its op context. */
function workspaceOf(
  turns: readonly TurnMemory[],
  vectors: readonly Float32Array[],
  ctxOf: ReadonlyArray<Float32Array | undefined>,
): { ctx: OpContext & { now: number; untouchLast(): void }; diaOf: Map<string, string> } {
  const state = new ShardState();
  const diaOf = new Map<string, string>();
  turns.forEach((t, i) => {
    const id = turnId(t, i);
    const before = turns[i - 1];
    // --prev-field: the turn before (within the neighbour gap, an hour) as a context value, lower-cased
    // so it reads as no name: a minor lexical field (BM25 at half weight, full share), nothing else.
    const prev =
      before !== undefined && t.atMs - before.atMs <= 3_600_000 && prevField(t, before)
        ? { prev: before.content.toLowerCase() }
        : {};
    diaOf.set(id, t.diaId);
    const at = t.atMs * 1000;
    const m: MemoryRecord = {
      id,
      content: t.content,
      importance: 0.5,
      context: { speaker: t.speaker, ...prev },
      entityId: null,
      kind: 'episode',
      embedding: vectors[i] as Float32Array,
      createdAt: at,
      occurredAt: at,
      updatedAt: at,
      lastAccessedAt: at,
      accessCount: 0,
      logicalClock: 0,
      sourceMemoryIds: null,
      supersededBy: null,
      expiresAt: null,
      speaker: null,
      conversationId: null,
      messageId: null,
    };
    applyRecord(state, { t: 'put', ws: 'lab', m: toStored(m) });
  });
  const w = state.workspaces.get('lab');
  while (w?.vectors.indexSome(1000)) {
    // the graph whole before the first recall, as a server has it after indexing
  }
  const t0 = performance.now();
  while (w?.densities.fillSome(1000, (id) => w.memories.get(id), w.earlier)) {
    // and every density (the indexer's next step); a recall would compute the missing ones itself
  }
  densityCost.ms += performance.now() - t0;
  densityCost.n += turns.length;
  if (w && ctxW > 0) withContextView(ctxW, w.vectors, turns, vectors, ctxOf);
  let last: MemoryRecord[] = [];
  const ctx = {
    state,
    ids: new IdGenerator(),
    now: Date.now() * 1000,
    nowUs(): number {
      return this.now;
    },
    commit: () => Promise.resolve(),
    requestErasure: () => {},
    touch(_ws: string, memories: readonly MemoryRecord[]): void {
      last = [...memories];
      for (const m of memories) {
        m.accessCount += 1;
        m.lastAccessedAt = this.now;
      }
    },
    untouchLast(): void {
      for (const m of last) m.accessCount -= 1;
      last = [];
    },
  };
  return { ctx, diaOf };
}

/**
 * `--prev-field all`: every turn gets the turn before it as a lexical field; `replies`: only a turn
 * whose previous one asks something (a question mark) and is by someone else (the `reply` rule).
 */
function prevField(t: TurnMemory, before: TurnMemory): boolean {
  const which = stringFlag(values, 'prev-field');
  if (which === undefined) return false;
  if (which === 'all') return true;
  if (which === 'replies') return /[?？؟]/u.test(before.content) && before.speaker !== t.speaker;
  throw new Error(`--prev-field: '${which}'; use all or replies`);
}

/** For `--misses`: where each evidence turn ranks among the first `dump-k` results (null: beyond). */
function missRow(
  conv: number,
  qi: number,
  q: Conversation['qa'][number],
  found: ReadonlyArray<string | undefined>,
): Record<string, unknown> {
  const ranks = Object.fromEntries(
    [...new Set(q.evidence.map((e) => e.trim()))].map((e) => [
      e,
      found.indexOf(e) < 0 ? null : found.indexOf(e) + 1,
    ]),
  );
  return { conv, qi, category: q.category, question: q.question, ranks };
}
