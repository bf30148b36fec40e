/**
 * @module native-bench/experiments/relevance-floor — what `relevance` recall reports, with the real model, for
 * cues that have an answer in the store and cues that have none, so a `min_relevance` floor can be
 * chosen from figures. Each LoCoMo conversation is imported as bench:retrieval imports it (one
 * memory a turn, at its time, the speaker in its context); then three kinds of cue recall its top
 * 10 by hybrid similarity: its own questions (related), nonsense letters, and questions about
 * things no conversation speaks of (off-topic). Printed: the top hit's relevance per kind, and for
 * each candidate floor what it would keep (questions keeping their top hit, evidence turns found
 * in the top 10, i.e. recall@10) and how many unrelated cues it would answer with nothing.
 *
 *   npm run build && node --import tsx native-bench/experiments/relevance-floor.ts [--data FILE] [--floors 0.1,0.2]
 *
 * Skips (exit 0) when the data file is absent: it is licensed for evaluation only.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { listFlag, stringFlag } from '../lib/args.ts';
import { expectJson, RestClient } from '../lib/rest-client.ts';
import { freePort, startServer } from '../lib/server-process.ts';
import { formatTable } from '../lib/table.ts';

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
interface Conversation {
  conversation: Record<string, unknown>;
  qa: Array<{ question: string; evidence: string[]; category: number }>;
}
type Hit = { memory: { memory_id: string }; relevance: number };

const NONSENSE = [
  'zzzz qqqq',
  'xq vv zzk',
  'qwrt plmk zxv',
  'jjjj kkkk llll',
  'vbnm zxcv',
  'frobnicate the quux',
  'asdf ghjk',
  'zyzzyva qoph',
  'xxyyzz',
  'blorp snarf gleep',
];
const OFF_TOPIC = [
  'What is the boiling point of tungsten?',
  'How do I configure a BGP route reflector?',
  'Which enzyme unwinds DNA during replication?',
  'What is the derivative of the hyperbolic tangent?',
  'How are Kubernetes pod disruption budgets enforced?',
  'What was the GDP of Luxembourg in 1987?',
  'How does a Wankel rotary engine seal its chambers?',
  'Which sorting algorithm is stable and runs in place?',
  'What is the half-life of carbon-14?',
  'How many moons does Neptune have?',
];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { data: { type: 'string' }, floors: { type: 'string' } },
  });
  const dataPath = resolve(stringFlag(values, 'data') ?? '../shared/data/locomo-dev.json');
  if (!existsSync(dataPath)) {
    console.log(`relevance-floor skipped: no dataset at ${dataPath}`);
    return;
  }
  const floors = listFlag(values, 'floors', [
    '0.05',
    '0.1',
    '0.15',
    '0.2',
    '0.25',
    '0.3',
    '0.35',
    '0.4',
  ]).map(Number);
  const conversations = JSON.parse(readFileSync(dataPath, 'utf8')) as Conversation[];
  const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-floor-'));
  const port = await freePort();
  const server = await startServer({
    dataDir,
    port,
    env: { FLASHBULB_EMBEDDER: 'model', FLASHBULB_DURABILITY: 'os', FLASHBULB_SHARDS: '1' },
  });
  const client = new RestClient({ host: '127.0.0.1', port, apiKey: server.apiKey, maxSockets: 4 });
  const top: Record<'related' | 'nonsense' | 'off-topic', number[]> = {
    related: [],
    nonsense: [],
    'off-topic': [],
  };
  /** Per question: its evidence turns, and the relevance of each found in the top 10. */
  const evidence: Array<{ total: number; found: number[] }> = [];
  try {
    for (const [n, conv] of conversations.entries()) {
      const ws = `floor-c${n}`;
      expectJson(await client.post('/v1/workspaces', { slug: ws }), 201, 'create workspace');
      const ids = await importTurns(client, ws, conv);
      const recall = async (cue: string): Promise<Hit[]> =>
        expectJson<{ results: Hit[] }>(
          await client.post(`/v1/workspaces/${ws}/recall`, { cue, top_k: 10 }),
          200,
          'recall',
        ).results;
      for (const q of conv.qa.filter(
        (x) => x.category >= 1 && x.category <= 4 && x.evidence.length > 0,
      )) {
        const hits = await recall(q.question);
        top.related.push(hits[0]?.relevance ?? 0);
        const wanted = new Set(q.evidence.map((e) => e.trim()));
        evidence.push({
          total: wanted.size,
          found: hits
            .filter((h) => wanted.has(ids.get(h.memory.memory_id) ?? ''))
            .map((h) => h.relevance),
        });
      }
      for (const cue of NONSENSE) top.nonsense.push((await recall(cue))[0]?.relevance ?? 0);
      for (const cue of OFF_TOPIC) top['off-topic'].push((await recall(cue))[0]?.relevance ?? 0);
    }
  } finally {
    client.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const q = (xs: number[], p: number): string =>
    [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]?.toFixed(3) ??
    '-';
  console.log('\ntop hit relevance by kind of cue');
  console.log(
    formatTable(
      ['cues', 'n', 'min', 'p10', 'p50', 'p90', 'max'],
      Object.entries(top).map(([k, xs]) => [
        k,
        xs.length,
        q(xs, 0),
        q(xs, 0.1),
        q(xs, 0.5),
        q(xs, 0.9),
        q(xs, 1),
      ]),
    ),
  );
  const recallAt10 = (floor: number): number =>
    evidence.reduce((s, e) => s + e.found.filter((r) => r >= floor).length / e.total, 0) /
    evidence.length;
  const share = (xs: number[], keep: (x: number) => boolean): string =>
    `${((100 * xs.filter(keep).length) / xs.length).toFixed(1)} %`;
  console.log(
    '\nwhat a floor keeps (recall@10: evidence turns found in the top 10, averaged per question)',
  );
  console.log(
    formatTable(
      [
        'floor',
        'recall@10',
        'questions keeping top hit',
        'nonsense answered with nothing',
        'off-topic answered with nothing',
      ],
      [0, ...floors].map((f) => [
        f,
        recallAt10(f).toFixed(4),
        share(top.related, (x) => x >= f),
        share(top.nonsense, (x) => x < f),
        share(top['off-topic'], (x) => x < f),
      ]),
    ),
  );
}

/** One memory a turn at its session's time plus 20 s a turn; returns memory id → dia_id. */
async function importTurns(
  client: RestClient,
  ws: string,
  conv: Conversation,
): Promise<Map<string, string>> {
  const c = conv.conversation;
  const sessions = Object.keys(c)
    .flatMap((k) => /^session_(\d+)$/.exec(k)?.[1] ?? [])
    .map(Number)
    .sort((a, b) => a - b);
  const ids = new Map<string, string>();
  const lines = sessions.flatMap((s) => {
    const date = String(c[`session_${s}_date_time`] ?? '');
    const start =
      Date.parse(date.replace(/^(\d+:\d+\s*[ap]m)\s+on\s+/i, '')) || Date.UTC(2023, 0, s);
    return (c[`session_${s}`] as Turn[]).map((t, i) => {
      const id = `${(start + i * 20_000).toString(16).padStart(12, '0')}${(s * 1000 + i).toString(16).padStart(20, '0')}`;
      ids.set(id, t.dia_id);
      const content = `[${date}] ${t.speaker}: ${t.text}${t.blip_caption ? ` [image: ${t.blip_caption}]` : ''}`;
      return JSON.stringify({
        memory: {
          memory_id: id,
          content,
          created_at: (start + i * 20_000) * 1000,
          context: { speaker: t.speaker },
        },
      });
    });
  });
  const summary = expectJson<{ imported: number }>(
    await client.send('POST', `/v1/workspaces/${ws}/import`, lines.join('\n')),
    200,
    'import',
  );
  if (summary.imported !== lines.length)
    throw new Error(`import: ${summary.imported} of ${lines.length}`);
  return ids;
}

await main();
