/**
 * @module native-bench/lib/forget-soak — forget-cost's soak mode: a mixed REST load at a fixed rate
 * (open loop) on a store that grows from its preload, with p50/p99 per operation for every
 * interval, the server's RSS and memory count at its end, and the snapshots the shards wrote
 * (the snapshot metric's count and sum, polled once a second, so each snapshot is placed in the
 * second it ended and the operations that started while it ran are summarised apart).
 */
import { sentence, seq, type Client } from './forget-load.ts';
import { summarize, type Summary } from './stats.ts';

export type OpName = 'remember' | 'recall' | 'get' | 'list' | 'edges' | 'forget';
export const OPS: readonly OpName[] = ['remember', 'recall', 'get', 'list', 'edges', 'forget'];

/**
 * The independent soak's operations (issue 51): a third remembers, so that at 100 ops/s a store of
 * 2,000 grows to about 10,000 in five minutes with the forgets taken off.
 */
export const DEFAULT_MIX: Readonly<Record<OpName, number>> = {
  remember: 0.3,
  recall: 0.25,
  get: 0.15,
  list: 0.1,
  edges: 0.15,
  forget: 0.05,
};

/** `remember=0.5,recall=0.25,...`: the weights given (the rest 0), normalised to sum to 1. */
export function parseMix(text: string | undefined): Record<OpName, number> {
  if (text === undefined) return { ...DEFAULT_MIX };
  const mix = Object.fromEntries(OPS.map((o) => [o, 0])) as Record<OpName, number>;
  for (const part of text.split(',')) {
    const [name, weight] = part.split('=');
    if (!OPS.includes(name as OpName) || !(Number(weight) >= 0))
      throw new Error(`--mix takes op=weight pairs among ${OPS.join(', ')}; got '${part}'`);
    mix[name as OpName] = Number(weight);
  }
  const sum = OPS.reduce((s, o) => s + mix[o], 0);
  if (!(sum > 0)) throw new Error('--mix: the weights sum to 0');
  for (const o of OPS) mix[o] /= sum;
  return mix;
}

export interface Snapshots {
  count: number;
  seconds: number;
}

interface ServerSample extends Snapshots {
  rssBytes: number;
  memories: number;
  /** The log's group commits (write, and sync when durable) so far: how many, seconds in all. */
  logWrites: number;
  logSeconds: number;
}

/** The snapshot metric's totals, the server's RSS and its memory count. */
async function sample(c: Client): Promise<ServerSample> {
  const text = String(await c.call('GET', '/v1/metrics'));
  const metric = (name: string): number =>
    Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    count: metric('flashbulb_snapshot_duration_seconds_count'),
    seconds: metric('flashbulb_snapshot_duration_seconds_sum'),
    rssBytes: metric('flashbulb_process_resident_memory_bytes'),
    memories: metric('flashbulb_memories'),
    logWrites: metric('flashbulb_log_sync_duration_seconds_count'),
    logSeconds: metric('flashbulb_log_sync_duration_seconds_sum'),
  };
}

/** A snapshot seen in the metrics: when it ended (s since the soak began) and how long it took. */
interface SnapshotMark {
  endS: number;
  seconds: number;
}

export interface SoakInterval extends Record<OpName | 'all' | 'duringSnapshot', Summary> {
  t: number;
  memories: number;
  rssMb: number;
  snapshots: SnapshotMark[];
}

type OpenLoop = (
  rate: number,
  seconds: number,
  op: () => Promise<unknown>,
) => Promise<{ ms: number[]; errors: number }>;

const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : '–');

export async function soak(
  c: Client,
  ids: string[],
  o: { durationS: number; rate: number; intervalS: number; mix: Record<OpName, number> },
  openLoop: OpenLoop,
): Promise<SoakInterval[]> {
  const pickIndex = (): number => Math.floor(Math.random() * ids.length);
  const run = async (name: OpName): Promise<void> => {
    if (name === 'remember') {
      const body = { content: sentence(), entity_id: `e${seq % 20}` };
      ids.push(((await c.call('POST', '/v1/memories', body)) as { memory_id: string }).memory_id);
    } else if (name === 'recall') {
      const body = { cue: sentence(), strategies: ['similarity'], top_k: 10 };
      await c.call('POST', '/v1/recall', body);
    } else if (name === 'get') await c.call('GET', `/v1/memories/${ids[pickIndex()]}`);
    else if (name === 'list') await c.call('GET', '/v1/memories?limit=50');
    else if (name === 'edges') await c.call('GET', `/v1/memories/${ids[pickIndex()]}/edges`);
    else {
      const id = ids.splice(pickIndex(), 1)[0];
      if (id !== undefined) await c.call('POST', '/v1/forget', { memory_ids: [id] });
    }
  };
  const bounds: Array<[OpName, number]> = [];
  let acc = 0;
  for (const op of OPS) bounds.push([op, (acc += o.mix[op])]);
  const choose = (): OpName => {
    const r = Math.random();
    return (bounds.find(([, b]) => r < b) ?? bounds[bounds.length - 1])?.[0] as OpName;
  };
  console.log(
    `mix: ${OPS.map((op) => `${op} ${(o.mix[op] * 100).toFixed(0)} %`).join(', ')}; ${o.rate} ops/s`,
  );
  console.log(
    `| t s | memories | RSS MB | ops/s | all p50 / p99 | ${OPS.map((op) => `${op} p50 / p99`).join(' | ')} | errors | snapshots: end s (s) | p50 / p99 while one ran |`,
  );
  console.log(`|---|---|---|---|---|${OPS.map(() => '---').join('|')}|---|---|---|`);
  const started = performance.now();
  const nowS = (): number => (performance.now() - started) / 1000;
  // Snapshots are placed by polling their metric once a second; a soak-long list of them.
  const marks: SnapshotMark[] = [];
  // The log's mean group commit per polled second (reads wait for the appends in flight).
  const logMs = new Map<number, number>();
  let last = await sample(c);
  let polling = true;
  const poller = (async () => {
    while (polling) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = await sample(c).catch(() => last);
      const n = now.count - last.count;
      for (let i = 0; i < n; i++)
        marks.push({ endS: nowS(), seconds: (now.seconds - last.seconds) / n });
      const writes = now.logWrites - last.logWrites;
      if (writes > 0)
        logMs.set(Math.floor(nowS()), (1000 * (now.logSeconds - last.logSeconds)) / writes);
      last = now;
    }
  })();
  const intervals: SoakInterval[] = [];
  const timeline: Array<{ atS: number; ms: number }> = [];
  for (let t = o.intervalS; t <= o.durationS; t += o.intervalS) {
    const lat = Object.fromEntries(OPS.map((op) => [op, [] as number[]])) as Record<
      OpName,
      number[]
    >;
    const from = timeline.length;
    const loop = await openLoop(o.rate, o.intervalS, async () => {
      const name = choose();
      const t0 = performance.now();
      await run(name);
      const took = performance.now() - t0;
      lat[name].push(took);
      timeline.push({ atS: (t0 - started) / 1000, ms: took });
    });
    // The snapshots that ended in this interval or within a second of its end (the poll's lag).
    await new Promise((r) => setTimeout(r, 1100));
    const end = nowS();
    const snapshots = marks.filter((m) => m.endS > end - o.intervalS - 1.1 && m.endS <= end);
    const during = timeline
      .slice(from)
      .filter((p) => marks.some((m) => p.atS >= m.endS - m.seconds - 1 && p.atS <= m.endS))
      .map((p) => p.ms);
    const s = await sample(c);
    const row: SoakInterval = {
      t,
      memories: s.memories,
      rssMb: s.rssBytes / 2 ** 20,
      snapshots,
      all: summarize(loop.ms, loop.errors, o.intervalS),
      duringSnapshot: summarize(during, 0, o.intervalS),
      ...(Object.fromEntries(OPS.map((op) => [op, summarize(lat[op], 0, o.intervalS)])) as Record<
        OpName,
        Summary
      >),
    };
    intervals.push(row);
    const snaps = snapshots.map((m) => `${m.endS.toFixed(0)} (${m.seconds.toFixed(2)})`).join(', ');
    console.log(
      `| ${t} | ${row.memories} | ${row.rssMb.toFixed(0)} | ${row.all.opsPerS.toFixed(1)} | ${ms(row.all.p50Ms)} / ${ms(row.all.p99Ms)} | ${OPS.map((op) => `${ms(row[op].p50Ms)} / ${ms(row[op].p99Ms)}`).join(' | ')} | ${loop.errors} | ${snaps || '–'} | ${row.duringSnapshot.ops > 0 ? `${ms(row.duringSnapshot.p50Ms)} / ${ms(row.duringSnapshot.p99Ms)}` : '–'} |`,
    );
  }
  polling = false;
  await poller;
  console.log(
    `slowest seconds (s: max ms, the log's mean commit ms in the two polls after): ${slowestSeconds(timeline, 12, logMs)}`,
  );
  const first = intervals[0];
  const lastRow = intervals[intervals.length - 1];
  if (first && lastRow) {
    const ratio = (op: OpName | 'all'): string =>
      `${op} ${(lastRow[op].p99Ms / first[op].p99Ms).toFixed(2)}×`;
    console.log(`p99 last / first interval: ${['all' as const, ...OPS].map(ratio).join(', ')}`);
  }
  return intervals;
}

/** The `n` seconds of the soak whose slowest operation (by start) took longest, in time order. */
function slowestSeconds(
  timeline: ReadonlyArray<{ atS: number; ms: number }>,
  n: number,
  logMs: ReadonlyMap<number, number>,
): string {
  const worst = new Map<number, number>();
  for (const p of timeline) {
    const s = Math.floor(p.atS);
    worst.set(s, Math.max(worst.get(s) ?? 0, p.ms));
  }
  return [...worst]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .sort((a, b) => a[0] - b[0])
    .map(
      ([s, m]) =>
        `${s}: ${m.toFixed(0)} (${Math.max(logMs.get(s + 1) ?? 0, logMs.get(s + 2) ?? 0).toFixed(1)})`,
    )
    .join(', ');
}
