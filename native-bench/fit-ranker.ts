/**
 * @module native-bench/fit-ranker — chooses the weights of the `named`, `thread` and `reply` features of
 * hybrid relevance (src/recall/hybrid.ts, HYBRID_WEIGHTS) by leave-one-conversation-out
 * cross-validation over what bench:retrieval dumps (`--configs hybrid --dump FILE --dump-k 200`:
 * each question's first 200 hybrid results with their similarity details).
 *
 * Results are re-ranked by relevance alone (without the composite score's recency, importance and
 * reinforcement). Changing a feature's weight from the shipped W to v moves a memory's relevance,
 * up to the common scale, by (v − W)·feature / S with S the shipped weights' sum (time not counted:
 * the development questions name no time; `reply` is not in the sum, see hybridRelevance), so any v
 * is scored from one dump. Per fold:
 *   - `served`: the order the server returned; `shipped`: relevance as served;
 *   - `named`, `thread`, `reply`: that feature's v chosen from GRID on the other conversations
 *     (recall@5 + recall@10), scored on the held-out one; the last lines give v chosen on all
 *     conversations. `reply` is a detail the server returns when some candidate follows a question.
 *     `thread` is not, so it is rebuilt here, approximately: the best match
 *     (0.65·cosine + 0.35·lexical) among the results of the same LoCoMo session, itself included (`D3:12` is
 *     in session D3, which is its thread when the bench writes turns at their times) within the
 *     first THREAD_POOL results, standing in for the server's candidate pool (the server's thread
 *     match also reads the thread as one text, THREAD_UNION; that part needs the texts, which a dump
 *     does not hold: it was chosen end to end, native-bench/HISTORY.md "Recall that generalises");
 *   - `logistic`: a logistic regression on cosine, lexical, named and relevance (balanced classes,
 *     L2), its linear part ranking — a learned ranker, for comparison.
 *
 *   node --import tsx native-bench/fit-ranker.ts .bench/dump-hybrid.jsonl
 */
import { readFileSync } from 'node:fs';
import { HYBRID_WEIGHTS, MATCH_COSINE_WEIGHT } from '../src/recall/hybrid.ts';

type Vec = number[];
interface Q {
  conv: number;
  evidence: number;
  /** Per result: cosine, lexical, named, relevance, thread, reply. */
  x: Vec[];
  hit: boolean[];
}

const GRID = [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6, 0.8, 1];
/** How many of a question's results stand in for the server's candidate pool (30 + 30 and neighbours). */
const THREAD_POOL = 60;
const S =
  HYBRID_WEIGHTS.cosine +
  HYBRID_WEIGHTS.lexical +
  HYBRID_WEIGHTS.context +
  HYBRID_WEIGHTS.thread +
  HYBRID_WEIGHTS.named;
/** The re-weighted features: their column in Q.x and their shipped weight. */
const FEATURES = {
  named: { col: 2, shipped: HYBRID_WEIGHTS.named },
  thread: { col: 4, shipped: HYBRID_WEIGHTS.thread },
  reply: { col: 5, shipped: HYBRID_WEIGHTS.reply },
} as const;
type Feature = keyof typeof FEATURES;

function load(path: string): Q[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const r = JSON.parse(line) as {
        conv: number;
        evidence: number;
        results: Array<Record<string, number | boolean | string>>;
      };
      const num = (h: Record<string, unknown>, k: string): number => Number(h[k] ?? 0);
      const x = r.results.map((h) => [
        num(h, 'cosine'),
        num(h, 'lexical'),
        num(h, 'named'),
        num(h, 'relevance'),
      ]);
      const session = r.results.map((h) => String(h.turn).split(':')[0]);
      const match = x.map(
        (v) => MATCH_COSINE_WEIGHT * (v[0] ?? 0) + (1 - MATCH_COSINE_WEIGHT) * (v[1] ?? 0),
      );
      x.forEach((v, i) => {
        let best = match[i] ?? 0;
        for (let j = 0; j < Math.min(THREAD_POOL, x.length); j++)
          if (session[j] === session[i]) best = Math.max(best, match[j] ?? 0);
        v.push(best, num(r.results[i] ?? {}, 'reply'));
      });
      return { conv: r.conv, evidence: r.evidence, x, hit: r.results.map((h) => h.hit === true) };
    });
}

/** Mean evidence recall@k over questions when ranking by `score` (ties, and null, keep the served order). */
function recallAt(qs: readonly Q[], score: ((x: Vec) => number) | null, k: number): number {
  let sum = 0;
  for (const q of qs) {
    const order = q.x.map((x, i) => ({ i, s: score ? score(x) : -i }));
    order.sort((a, b) => b.s - a.s || a.i - b.i);
    sum += order.slice(0, k).filter((o) => q.hit[o.i]).length / q.evidence;
  }
  return qs.length === 0 ? 0 : sum / qs.length;
}

const withWeight =
  (f: Feature, v: number) =>
  (x: Vec): number =>
    (x[3] ?? 0) + ((v - FEATURES[f].shipped) * (x[FEATURES[f].col] ?? 0)) / S;
const linear =
  (w: Vec) =>
  (x: Vec): number =>
    x.slice(0, 4).reduce((s, v, i) => s + v * (w[i] ?? 0), 0);

function choose(f: Feature, train: readonly Q[]): number {
  let best = FEATURES[f].shipped;
  let bestScore = -1;
  for (const v of GRID) {
    const s = recallAt(train, withWeight(f, v), 10) + recallAt(train, withWeight(f, v), 5);
    if (s > bestScore) [best, bestScore] = [v, s];
  }
  return best;
}

/** Logistic regression by full-batch gradient descent, positives weighted to balance the classes. */
function fitLogistic(train: readonly Q[], l2 = 1e-3, steps = 300, rate = 0.5): Vec {
  const xs = train.flatMap((q) => q.x.map((x) => x.slice(0, 4)));
  const ys = train.flatMap((q) => q.hit.map((h) => (h ? 1 : 0)));
  const pos = ys.reduce((a: number, b) => a + b, 0);
  const wPos = (ys.length - pos) / Math.max(1, pos);
  let w: Vec = [0, 0, 0, 0];
  let b = 0;
  for (let t = 0; t < steps; t++) {
    const g: Vec = [0, 0, 0, 0];
    let gb = 0;
    let wsum = 0;
    xs.forEach((x, n) => {
      const y = ys[n] as number;
      const c = y === 1 ? wPos : 1;
      const e = c * (1 / (1 + Math.exp(-(linear(w)(x) + b))) - y);
      x.forEach((v, i) => {
        g[i] = (g[i] ?? 0) + e * v;
      });
      gb += e;
      wsum += c;
    });
    w = w.map((v, i) => v - rate * ((g[i] ?? 0) / wsum + l2 * v));
    b -= rate * (gb / wsum);
  }
  return w;
}

function report(qs: readonly Q[]): void {
  const convs = [...new Set(qs.map((q) => q.conv))].sort((a, b) => a - b);
  const fmt = (v: number): string => v.toFixed(3);
  const methods: Record<
    string,
    (train: readonly Q[]) => { score: ((x: Vec) => number) | null; note: string }
  > = {
    served: () => ({ score: null, note: '' }),
    shipped: () => ({ score: withWeight('named', FEATURES.named.shipped), note: '' }),
    named: (train) => {
      const v = choose('named', train);
      return { score: withWeight('named', v), note: `named ${v}` };
    },
    thread: (train) => {
      const v = choose('thread', train);
      return { score: withWeight('thread', v), note: `thread ${v}` };
    },
    reply: (train) => {
      const v = choose('reply', train);
      return { score: withWeight('reply', v), note: `reply ${v}` };
    },
    logistic: (train) => {
      const w = fitLogistic(train);
      return { score: linear(w), note: `w ${w.map((v) => v.toFixed(2)).join(',')}` };
    },
  };
  for (const [name, fit] of Object.entries(methods)) {
    const folds = convs.map((c) => {
      const { score, note } = fit(qs.filter((q) => q.conv !== c));
      const test = qs.filter((q) => q.conv === c);
      return { c, note, r5: recallAt(test, score, 5), r10: recallAt(test, score, 10) };
    });
    const mean = (f: (x: (typeof folds)[number]) => number): number =>
      folds.reduce((s, x) => s + f(x), 0) / folds.length;
    const sd = (f: (x: (typeof folds)[number]) => number): number =>
      Math.sqrt(mean((x) => (f(x) - mean(f)) ** 2));
    console.log(
      `${name.padEnd(9)} R@5 ${fmt(mean((x) => x.r5))} ±${fmt(sd((x) => x.r5))}  R@10 ${fmt(mean((x) => x.r10))} ±${fmt(sd((x) => x.r10))}  held out ${folds.map((x) => `${x.c}: ${fmt(x.r5)}/${fmt(x.r10)}${x.note ? ` (${x.note})` : ''}`).join('  ')}`,
    );
  }
  for (const f of Object.keys(FEATURES) as Feature[])
    console.log(`${f} weight chosen on all conversations: ${choose(f, qs)}`);
}

const path = process.argv[2];
if (!path) throw new Error('usage: fit-ranker.ts DUMP.jsonl');
report(load(path));
