/**
 * @module native-bench/retrieval — retrieval quality on a long-conversation dataset (LoCoMo format),
 * end to end over REST against a fresh server with the real model.
 *
 * Every dialogue turn becomes one memory (`[<session date>] <speaker>: <text>`, plus
 * ` [image: <caption>]` when the turn shares an image), written as an agent taking part in the
 * conversation would write it: through conversation ingest (`POST /v1/conversations/{id}/messages`),
 * in order, each turn with its `speaker` and the time it was said (`occurred_at`: its session's
 * start + 20 s a turn), one conversation per dataset conversation, calls of at most 5,000 messages.
 * `--write import` writes the same turns through POST /v1/import at those times with the speaker
 * in the context (`{"speaker": …}`; `--no-speaker`: without), the path before ingest existed;
 * `--write remember` (or `--same-minute`) by concurrent remembers, now, without times. Each question of categories 1–4 is a cue;
 * the score is the share of its evidence turns found in the first k results (evidence recall@k),
 * averaged per category and overall. Each configuration gets its own workspace per conversation, so
 * the access counts one configuration's recalls leave behind never reach another's ranking.
 *
 *   npm run bench:retrieval                       # ../shared/data/locomo-dev.json, every configuration
 *   npm run bench:retrieval -- --data FILE --configs hybrid,all --env FLASHBULB_EMBED_THREADS=2
 *   npm run bench:retrieval -- --extra '{"scoring_weights":{"w_relevance":1,"w_recency":0,"w_importance":0,"w_reinforcement":0}}'
 *   npm run bench:retrieval -- --cv              # leave-one-conversation-out mean and spread (lib/retrieval-cv.ts)
 *   npm run bench:retrieval -- --configs hybrid --dump .bench/dump.jsonl --dump-k 200   # for fit-ranker.ts
 *   npm run bench:retrieval -- --configs hybrid --cv --typos 0.1 [--typo-seed 2]       # memories with typos
 *   npm run bench:retrieval -- --configs hybrid --cv --write import                  # the import path
 *
 * Skips (exit 0) with a message when the data file is absent: the data is licensed for evaluation
 * only and never copied into this repository.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { envFlag, listFlag, numberFlag, stringFlag } from './lib/args.ts';
import { expectJson, RestClient } from './lib/rest-client.ts';
import { freePort, startServer } from './lib/server-process.ts';
import { Rng } from './lib/prng.ts';
import { misspell } from './lib/typos.ts';
import {
  askedAtUs,
  categoryNames,
  scoredQuestions,
  share,
  turnsOf,
  type Conversation,
  type Question,
  type TurnMemory,
} from './lib/retrieval-data.ts';
import {
  CATEGORY_NAMES,
  KS,
  type Scores,
  printCv,
  summary,
  printScores,
  printMarkdown,
} from './lib/retrieval-report.ts';
import { ingestTurns, importAtTimes } from './lib/retrieval-write.ts';

/** A recall configuration: its name, and the request fields it adds to every recall. */
interface Config {
  name: string;
  body: Record<string, unknown>;
}

const CONFIGS: readonly Config[] = [
  { name: 'hybrid', body: { strategies: ['similarity'] } },
  { name: 'dense', body: { strategies: ['similarity'], similarity_mode: 'dense' } },
  { name: 'lexical', body: { strategies: ['similarity'], similarity_mode: 'lexical' } },
  { name: 'all', body: { strategies: ['similarity', 'temporal', 'causal', 'analogical'] } },
];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' },
      configs: { type: 'string' },
      conversations: { type: 'string' },
      concurrency: { type: 'string' },
      env: { type: 'string', multiple: true },
      out: { type: 'string' },
      verbose: { type: 'boolean' },
      markdown: { type: 'boolean' },
      extra: { type: 'string' },
      cv: { type: 'boolean' },
      'no-speaker': { type: 'boolean' },
      'same-minute': { type: 'boolean' },
      write: { type: 'string' },
      twice: { type: 'boolean' },
      'split-turns': { type: 'boolean' },
      typos: { type: 'string' },
      'typo-seed': { type: 'string' },
      dump: { type: 'string' },
      'dump-k': { type: 'string' },
    },
  });
  const dataPath = resolve(stringFlag(values, 'data') ?? '../shared/data/locomo-dev.json');
  if (!existsSync(dataPath)) {
    console.log(
      `bench:retrieval skipped: no dataset at ${dataPath} (LoCoMo-format JSON; see ../shared/data/README.md). Pass --data FILE.`,
    );
    return;
  }
  const wanted = listFlag(
    values,
    'configs',
    CONFIGS.map((c) => c.name),
  );
  const configs = wanted.map((name) => {
    const c = CONFIGS.find((x) => x.name === name);
    if (!c)
      throw new Error(
        `--configs: unknown configuration '${name}'; use ${CONFIGS.map((x) => x.name).join(', ')}`,
      );
    return c;
  });
  const all = JSON.parse(readFileSync(dataPath, 'utf8')) as Conversation[];
  Object.assign(CATEGORY_NAMES, categoryNames(all));
  const picked = listFlag(
    values,
    'conversations',
    all.map((_, i) => String(i)),
  ).map(Number);
  const conversations = picked.map((i) => {
    const c = all[i];
    if (!c) throw new Error(`--conversations: no conversation ${i} in ${dataPath}`);
    return c;
  });
  const write = values['same-minute'] ? 'remember' : (stringFlag(values, 'write') ?? 'ingest');
  if (write !== 'ingest' && write !== 'import' && write !== 'remember')
    throw new Error(`--write: '${write}' is not ingest, import or remember`);
  if (write === 'ingest' && values['no-speaker'])
    throw new Error(
      '--no-speaker: conversation ingest names every speaker; use --write import or remember',
    );
  const concurrency = numberFlag(values, 'concurrency', 8);
  const extra = JSON.parse(stringFlag(values, 'extra') ?? '{}') as Record<string, unknown>;
  const dumpPath = stringFlag(values, 'dump');
  const dump: Dump | null = dumpPath ? { k: numberFlag(values, 'dump-k', 200), rows: [] } : null;

  const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-retrieval-'));
  const port = await freePort();
  const server = await startServer({
    dataDir,
    port,
    // Background reflection off: it runs on its own schedule (after 50 new episodes, at most every
    // so often), so the insights it would add among a recall's results would depend on timing, and
    // they are not turns, never evidence. --env FLASHBULB_REFLECT_ENABLED=true turns it on.
    env: {
      FLASHBULB_EMBEDDER: 'model',
      FLASHBULB_DURABILITY: 'os',
      FLASHBULB_SHARDS: '1',
      FLASHBULB_REFLECT_ENABLED: 'false',
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
  const report: Record<string, unknown> = {
    data: dataPath,
    conversations: picked,
    write,
    configs: {},
  };
  const summaries: Array<[string, Scores]> = [];
  console.log(
    `write path: ${write}${write === 'ingest' ? ' (POST /v1/conversations/{id}/messages: speaker, occurred_at, in order)' : ''}`,
  );
  try {
    await warmCues(client, conversations);
    for (const config of configs) {
      const scores: Scores = { sums: new Map(), byConv: new Map(), questions: [], latenciesMs: [] };
      for (const [n, conv] of conversations.entries()) {
        const ws = `${config.name}-c${picked[n]}`;
        expectJson(await client.post('/v1/workspaces', { slug: ws }), 201, 'create workspace');
        const speaker = !values['no-speaker'];
        const turns = withTypos(
          turnsOf(conv, values['split-turns'] ?? false),
          numberFlag(values, 'typos', 0),
          numberFlag(values, 'typo-seed', 1) + (picked[n] as number),
        );
        const ids =
          write === 'ingest'
            ? await ingestTurns(client, ws, `conversation-${picked[n]}`, turns)
            : write === 'import'
              ? await importAtTimes(client, ws, turns, speaker)
              : await load(client, ws, turns, concurrency, speaker);
        // Written live, turns are checked for contradictions after the write (edges the causal walk
        // reads): the questions are asked once that is done, so every run asks the same store.
        await settled(client);
        await ask(
          client,
          ws,
          conv,
          ids,
          { name: config.name, body: { ...config.body, ...extra } },
          scores,
          { convIndex: picked[n] as number, dump, twice: values.twice ?? false },
        );
      }
      printScores(config.name, scores);
      summaries.push([config.name, scores]);
      (report.configs as Record<string, unknown>)[config.name] = summary(scores);
    }
    if (values.markdown) printMarkdown(summaries);
    if (values.cv) report.cv = printCv(summaries, picked);
  } finally {
    client.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (dump && dumpPath)
    writeFileSync(dumpPath, `${dump.rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const out =
    stringFlag(values, 'out') ??
    join('.bench', `retrieval-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(resolve(out, '..'), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwritten: ${out}`);
}

/** `--typos P`: each turn's text (not its date or speaker) misspelled as people type (lib/typos.ts). */
function withTypos(turns: TurnMemory[], p: number, seed: number): TurnMemory[] {
  if (p <= 0) return turns;
  const rng = new Rng(seed);
  return turns.map((t) => {
    const head = /^\[[^\]]*\] [^:]*: /u.exec(t.content)?.[0] ?? '';
    return { ...t, content: head + misspell(t.content.slice(head.length), p, rng) };
  });
}

/**
 * Asks every question once in an empty workspace, so the embedding cache holds every cue and each
 * configuration's latency is the recall's, not the first configuration's embedding.
 */
async function warmCues(client: RestClient, conversations: readonly Conversation[]): Promise<void> {
  expectJson(await client.post('/v1/workspaces', { slug: 'warm-cues' }), 201, 'create workspace');
  for (const q of conversations.flatMap((c) => c.qa)) {
    expectJson(
      await client.post('/v1/workspaces/warm-cues/recall', {
        cue: q.question,
        strategies: ['similarity'],
      }),
      200,
      'recall',
    );
  }
}

/** Stores every turn (`concurrency` at a time, in order); returns memory id → dia_id. */
async function load(
  client: RestClient,
  ws: string,
  turns: readonly TurnMemory[],
  concurrency: number,
  speaker: boolean,
): Promise<Map<string, string>> {
  const byMemory = new Map<string, string>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < turns.length) {
      const t = turns[next++] as TurnMemory;
      const reply = await client.post(`/v1/workspaces/${ws}/memories`, {
        content: t.content,
        ...(speaker ? { context: { speaker: t.speaker } } : {}),
      });
      byMemory.set(expectJson<{ memory_id: string }>(reply, 201, 'remember').memory_id, t.diaId);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return byMemory;
}

/** Resolves once the shards report no background work left (contradiction checks, HNSW indexing), twice in a row. */
async function settled(client: RestClient): Promise<void> {
  for (let quiet = 0, tries = 0; quiet < 2; tries++) {
    if (tries > 600) throw new Error('the background work did not drain within 10 minutes');
    const text = (await client.get('/v1/metrics')).body.toString('utf8');
    const left = [...text.matchAll(/^flashbulb_background_backlog\{[^}]*\} (\S+)$/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
    quiet = left === 0 ? quiet + 1 : 0;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * `--dump FILE`: per question, the similarity features of the first `k` results (one JSON line per
 * question and configuration), for native-bench/fit-ranker.ts.
 */
interface Dump {
  k: number;
  rows: Array<Record<string, unknown>>;
}

/**
 * Asks every question with `top_k` 10 (recall@5 and @10, latency), then, in a second pass, with
 * `top_k` 25 (recall@25): an agent asks each question once, so the access counts the ranking reads
 * (the composite score's reinforcement term) are those the top-10 recalls of earlier questions
 * left. (`--twice`: each question at 10 then at 25 before the next, as until issue 22's third step.)
 */
async function ask(
  client: RestClient,
  ws: string,
  conv: Conversation,
  ids: Map<string, string>,
  config: Config,
  scores: Scores,
  o: { convIndex: number; dump: Dump | null; twice: boolean },
): Promise<void> {
  const questions = scoredQuestions(conv, CATEGORY_NAMES);
  const found = async (q: Question, k: number): Promise<Array<string | undefined>> => {
    const t0 = performance.now();
    const reply = await client.post(`/v1/workspaces/${ws}/recall`, {
      cue: q.question,
      top_k: k,
      ...askedAt(q),
      ...config.body,
    });
    if (k === 10) scores.latenciesMs.push(performance.now() - t0);
    return expectJson<{ results: Array<{ memory: { memory_id: string } }> }>(
      reply,
      200,
      'recall',
    ).results.map((r) => ids.get(r.memory.memory_id));
  };
  const at = new Map<number, number[]>();
  for (const { q, qi } of questions) {
    if (o.dump) await dumpQuestion(client, ws, ids, config, o.dump, { conv: o.convIndex, qi, q });
    const top = await found(q, 10);
    at.set(qi, [share(q.evidence, top.slice(0, 5)), share(q.evidence, top)]);
    if (o.twice) at.get(qi)?.push(share(q.evidence, await found(q, 25)));
  }
  if (!o.twice)
    for (const { q, qi } of questions) at.get(qi)?.push(share(q.evidence, await found(q, 25)));
  for (const { q, qi } of questions) {
    scores.questions.push({ conv: o.convIndex, category: q.category, at: at.get(qi) ?? [] });
    for (const [map, key] of [
      [scores.sums, 0],
      [scores.sums, q.category],
      [scores.byConv, o.convIndex],
    ] as const) {
      const s = map.get(key) ?? { n: 0, at: KS.map(() => 0) };
      s.n += 1;
      (at.get(qi) ?? []).forEach((v, i) => {
        s.at[i] = (s.at[i] ?? 0) + v;
      });
      map.set(key, s);
    }
  }
}

async function dumpQuestion(
  client: RestClient,
  ws: string,
  ids: Map<string, string>,
  config: Config,
  dump: Dump,
  o: { conv: number; qi: number; q: Question },
): Promise<void> {
  const reply = await client.post(`/v1/workspaces/${ws}/recall`, {
    cue: o.q.question,
    ...askedAt(o.q),
    ...config.body,
    top_k: dump.k,
  });
  type Hit = { memory: { memory_id: string }; strategy_details: Array<Record<string, unknown>> };
  const evidence = new Set(o.q.evidence.map((e) => e.trim()));
  const results = expectJson<{ results: Hit[] }>(reply, 200, 'recall').results.map((r) => {
    const sim = r.strategy_details.find((d) => d.strategy === 'similarity') ?? {};
    const { strategy: _s, distance: _d, ...features } = sim;
    const turn = ids.get(r.memory.memory_id) ?? '';
    return { turn, hit: evidence.has(turn), ...features };
  });
  dump.rows.push({
    config: config.name,
    conv: o.conv,
    qi: o.qi,
    category: o.q.category,
    evidence: evidence.size,
    results,
  });
}

/** A question with an `ask_time` (LifeBench) is asked at the end of that month (`asked_at_us`); the others now. */
function askedAt(q: Question): { asked_at_us?: number } {
  return q.ask_time === undefined ? {} : { asked_at_us: askedAtUs(q, 0) };
}

await main();
