/**
 * @module native-bench/contradictions — the service's own contradiction check on SICK sentence
 * pairs, end to end over REST against a fresh server with the default model and no language model.
 *
 * For each pair of a seeded, label-balanced sample of a split: a fresh workspace, sentence A
 * remembered, then sentence B. Once the background check has run (the shards' check backlog,
 * `flashbulb_background_backlog{work="contradiction_checks"}`, reads 0 in a report made after the
 * last write), the pair counts as flagged when B has a `contradicts` edge to A or the workspace has
 * a pending candidate for them. Prints recall on CONTRADICTION pairs, precision, false alarms per
 * 100 ENTAILMENT and per 100 NEUTRAL pairs, and the contradiction pairs never compared (judged from
 * the pair's cosine, read back with a dense recall, by the same candidate rule the shard applies).
 *
 *   npm run bench:contradictions                          # 300 pairs per label of SICK_train.txt
 *   npm run bench:contradictions -- --split trial --all   # every pair of SICK_trial.txt
 *   npm run bench:contradictions -- --per-label 100 --seed 7 --explain
 *
 * `--explain` lists misses and false alarms with the rule that decided (the server's `reason` for a
 * flagged pair; the classifier's own account, re-run here on the server's cosine, for a miss).
 * Skips (exit 0) with a message when the data is absent: SICK is licensed for evaluation only and
 * never copied into this repository.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { classifyPair, isCandidate } from '../src/analysis/contradiction.ts';
import { envFlag, numberFlag, stringFlag } from './lib/args.ts';
import { expectJson, RestClient } from './lib/rest-client.ts';
import { freePort, startServer } from './lib/server-process.ts';
import {
  explain,
  printScore,
  readSick,
  sample,
  score,
  type Outcome,
  type SickPair,
} from './lib/sick.ts';

interface EdgeReply {
  source_id: string;
  target_id: string;
  edge_type: string;
  reason?: string;
}

interface PendingReply {
  memory_id_a: string;
  memory_id_b: string;
  reason?: string;
}

interface Stored {
  pair: SickPair;
  ws: string;
  a: string;
  b: string;
}

const SETTLE_TIMEOUT_MS = 600_000;
/** Shards report their backlog once a second; a reading this long after the last write is newer than it. */
const REPORT_PERIOD_MS = 1_200;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' },
      split: { type: 'string' },
      'per-label': { type: 'string' },
      seed: { type: 'string' },
      all: { type: 'boolean' },
      explain: { type: 'boolean' },
      concurrency: { type: 'string' },
      env: { type: 'string', multiple: true },
      verbose: { type: 'boolean' },
    },
  });
  const split = stringFlag(values, 'split') ?? 'train';
  if (split !== 'train' && split !== 'trial')
    throw new Error(`--split must be train or trial, got '${split}'`);
  // ../shared next to a checkout; ../../shared next to a worktree under wt/.
  const dataPath = resolve(
    stringFlag(values, 'data') ??
      [`../shared/data/sick/SICK_${split}.txt`, `../../shared/data/sick/SICK_${split}.txt`].find(
        (p) => existsSync(p),
      ) ??
      `../shared/data/sick/SICK_${split}.txt`,
  );
  const pairs = readSick(dataPath);
  if (pairs === null) {
    console.log(
      `bench:contradictions skipped: no data at ${dataPath} (SICK; see ../shared/data/README.md). Pass --data FILE.`,
    );
    return;
  }
  const perLabel = values.all ? Number.POSITIVE_INFINITY : numberFlag(values, 'per-label', 300);
  const picked = sample(pairs, perLabel, numberFlag(values, 'seed', 1));
  const concurrency = numberFlag(values, 'concurrency', 8);

  const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-contradictions-'));
  const port = await freePort();
  const server = await startServer({
    dataDir,
    port,
    env: {
      FLASHBULB_EMBEDDER: 'model',
      FLASHBULB_DURABILITY: 'os',
      FLASHBULB_SHARDS: '1',
      ...envFlag(values, 'env'),
    },
    verbose: values.verbose ?? false,
  });
  const client = new RestClient({
    host: '127.0.0.1',
    port,
    apiKey: server.apiKey,
    maxSockets: concurrency,
  });
  try {
    const t0 = performance.now();
    const stored = await inParallel(picked, concurrency, (pair, i) =>
      store(client, pair, `sick-${split}-${i}`),
    );
    const lastWrite = performance.now();
    await settle(client, lastWrite);
    const settledMs = performance.now() - lastWrite;
    const outcomes = await inParallel(stored, concurrency, (s) => read(client, s));
    console.log(
      `${picked.length} pairs from ${dataPath}: stored in ${((lastWrite - t0) / 1000).toFixed(1)} s, checks settled ${(settledMs / 1000).toFixed(1)} s later`,
    );
    if (values.explain) explain(outcomes);
    printScore(`SICK ${split}`, score(outcomes));
  } finally {
    client.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function inParallel<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}

/** A fresh workspace; A remembered, then B once A's write is acknowledged. */
async function store(client: RestClient, pair: SickPair, ws: string): Promise<Stored> {
  expectJson(await client.post('/v1/workspaces', { slug: ws }), 201, 'create workspace');
  const a = expectJson<{ memory_id: string }>(
    await client.post(`/v1/workspaces/${ws}/memories`, { content: pair.a }),
    201,
    'remember A',
  ).memory_id;
  const b = expectJson<{ memory_id: string }>(
    await client.post(`/v1/workspaces/${ws}/memories`, { content: pair.b }),
    201,
    'remember B',
  ).memory_id;
  return { pair, ws, a, b };
}

/** Polls the metrics until every shard's check backlog is 0 in a report made after the last write. */
async function settle(client: RestClient, lastWrite: number): Promise<void> {
  const deadline = performance.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const text = (await client.get('/v1/metrics')).body.toString('utf8');
    const backlogs = [
      ...text.matchAll(
        /^flashbulb_background_backlog\{[^}]*work="contradiction_checks"[^}]*\} (\S+)$/gm,
      ),
    ].map((m) => Number(m[1]));
    if (
      backlogs.length > 0 &&
      backlogs.every((n) => n === 0) &&
      performance.now() - lastWrite >= REPORT_PERIOD_MS
    )
      return;
    if (performance.now() > deadline)
      throw new Error(
        `contradiction checks still queued after ${SETTLE_TIMEOUT_MS} ms: ${backlogs.join(', ')}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function read(client: RestClient, s: Stored): Promise<Outcome> {
  const edges = expectJson<{ outgoing: EdgeReply[] }>(
    await client.get(`/v1/workspaces/${s.ws}/memories/${s.b}/edges`),
    200,
    'edges',
  );
  const edge = edges.outgoing.find((e) => e.edge_type === 'contradicts' && e.target_id === s.a);
  const pending = expectJson<PendingReply[]>(
    await client.post(`/v1/workspaces/${s.ws}/contradictions/prepare`, {}),
    200,
    'pending',
  ).find(
    (p) =>
      (p.memory_id_a === s.a && p.memory_id_b === s.b) ||
      (p.memory_id_a === s.b && p.memory_id_b === s.a),
  );
  const cosine = await cosineOf(client, s);
  const compared = isCandidate(s.pair.a, s.pair.b, cosine);
  if (edge)
    return { pair: s.pair, found: 'edge', compared, reason: edge.reason ?? 'no reason given' };
  if (pending)
    return {
      pair: s.pair,
      found: 'pending',
      compared,
      reason: pending.reason ?? 'no reason given',
    };
  const why = compared ? classifyPair(s.pair.a, s.pair.b, cosine).reason : 'not a candidate';
  return { pair: s.pair, found: 'none', compared, reason: `cosine ${cosine.toFixed(2)}: ${why}` };
}

/** The cosine of A and B as the server sees it: a dense recall of A with B as the cue. */
async function cosineOf(client: RestClient, s: Stored): Promise<number> {
  const reply = await client.post(`/v1/workspaces/${s.ws}/recall`, {
    cue: s.pair.b,
    top_k: 2,
    strategies: ['similarity'],
    similarity_mode: 'dense',
  });
  type Hit = {
    memory: { memory_id: string };
    strategy_details: Array<{ strategy: string; cosine?: number }>;
  };
  const hit = expectJson<{ results: Hit[] }>(reply, 200, 'recall').results.find(
    (h) => h.memory.memory_id === s.a,
  );
  return hit?.strategy_details.find((d) => d.strategy === 'similarity')?.cosine ?? 0;
}

await main();
