/**
 * @module native-bench/micro/browse — the dashboard's reads of one workspace, in-process (the shard
 * ops, no worker hop or JSON), at 10k and 100k memories with corpus sentences, entities and one
 * edge each: list pages newest first (with and without a total), by importance (first page and
 * a page deep), by words (a common and a rare one), in a narrow time range, for one entity; the
 * timeline by day and hour; entity summaries; the graph overview; the contradictions list.
 *
 *   node --import tsx native-bench/micro/browse.ts [--quick] [--sizes 10000,100000]
 */
import { IdGenerator } from '../../src/model/ids.ts';
import { nowUs } from '../../src/model/memory.ts';
import type { ListInput } from '../../src/protocol/shard.ts';
import type { OpContext } from '../../src/shard/ops/context.ts';
import { list, timeline } from '../../src/shard/ops/list.ts';
import { contradictions, entitySummaries, graphOverview } from '../../src/shard/ops/overview.ts';
import { tokenize } from '../../src/shard/index/tokenize.ts';
import type { ShardState } from '../../src/shard/store/apply.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { microFlags, numbersFlag, report } from './flags.ts';
import { measure } from './measure.ts';
import { BUSY_NOTE, loadCell } from './quiet.ts';
import { shardRecords, stateOf, WS } from './shard-fixture.ts';

function opContext(state: ShardState): OpContext {
  return {
    state,
    ids: new IdGenerator(),
    nowUs,
    commit: () => Promise.resolve(),
    requestErasure: () => {},
    touch: () => {},
  };
}

const BASE: ListInput = {
  filter: null,
  entityId: null,
  kind: null,
  cursor: null,
  limit: 25,
  includeSuperseded: false,
};

async function main(): Promise<void> {
  const { quick, values } = microFlags(['sizes']);
  const sizes = numbersFlag(values, 'sizes', quick ? [10_000] : [10_000, 100_000]);
  const timeMs = quick ? 500 : 2000;
  const rows: Cell[][] = [];
  for (const n of sizes) {
    const state = stateOf(shardRecords(n, 7));
    const ctx = opContext(state);
    const w = state.workspaces.get(WS);
    if (!w) throw new Error('no workspace');
    const entity = [...w.byEntity.entries()].sort((a, b) => b[1].size - a[1].size)[0]?.[0] ?? null;
    const times = [...w.memories.values()].map((m) => m.createdAt).sort((a, b) => a - b);
    const mid = times[Math.floor(times.length / 2)] as number;
    const span = (times[times.length - 1] as number) - (times[0] as number);
    const deep = list(ctx, WS, {
      ...BASE,
      sort: 'importance',
      order: 'desc',
      limit: 100,
    }).nextCursor;
    // A common word and a rare one, from the index's own counts.
    const words = new Map<string, number>();
    for (const m of [...w.memories.values()].slice(0, 2000))
      for (const t of new Set(tokenize(m.content)))
        if (/^[a-z]{4,}$/.test(t)) words.set(t, (words.get(t) ?? 0) + 1);
    const ranked = [...words].sort((a, b) => b[1] - a[1]);
    const common = ranked[0]?.[0] ?? 'water';
    const rare = ranked.find(([, c]) => c === 2)?.[0] ?? 'zebra';
    const cases: Array<[string, () => unknown]> = [
      ['list newest first, 25', () => list(ctx, WS, { ...BASE, order: 'desc' })],
      ['  … with_total', () => list(ctx, WS, { ...BASE, order: 'desc', withTotal: true })],
      [
        'list by importance, first page',
        () => list(ctx, WS, { ...BASE, sort: 'importance', order: 'desc' }),
      ],
      [
        '  … after 100 (a cursor)',
        () => list(ctx, WS, { ...BASE, sort: 'importance', order: 'desc', cursor: deep }),
      ],
      [
        `list q='${common}' (common), with_total`,
        () => list(ctx, WS, { ...BASE, order: 'desc', text: common, withTotal: true }),
      ],
      [
        `list q='${rare}' (rare), with_total`,
        () => list(ctx, WS, { ...BASE, order: 'desc', text: rare, withTotal: true }),
      ],
      [
        'list 1 % of the time range, newest first',
        () => list(ctx, WS, { ...BASE, order: 'desc', since: mid, until: mid + span / 100 }),
      ],
      [
        `list entity '${entity}', newest first, with_total`,
        () => list(ctx, WS, { ...BASE, order: 'desc', entityId: entity, withTotal: true }),
      ],
      [
        'timeline by day',
        () =>
          timeline(ctx, WS, {
            filter: null,
            entityId: null,
            kind: null,
            includeSuperseded: false,
            bucket: 'day',
            offsetUs: 0,
            maxBuckets: 1000,
          }),
      ],
      [
        'timeline by hour',
        () =>
          timeline(ctx, WS, {
            filter: null,
            entityId: null,
            kind: null,
            includeSuperseded: false,
            bucket: 'hour',
            offsetUs: 0,
            maxBuckets: 1000,
          }),
      ],
      [
        'entity summaries',
        () => entitySummaries(ctx, WS, { text: null, sort: 'recent', limit: 1000 }),
      ],
      [
        'graph overview, 100 nodes',
        () =>
          graphOverview(ctx, WS, { entityId: null, kind: null, maxNodes: 100, edgeTypes: null }),
      ],
      [
        'graph overview, 500 nodes',
        () =>
          graphOverview(ctx, WS, { entityId: null, kind: null, maxNodes: 500, edgeTypes: null }),
      ],
      [
        'contradictions, limit 50 (none held)',
        () => contradictions(ctx, WS, { entityId: null, limit: 50 }),
      ],
    ];
    for (const [what, fn] of cases) {
      const m = await measure(`${what} (${n})`, fn, { timeMs, iterations: 20 });
      rows.push([n.toLocaleString('en'), what, m.p50Ms, m.p99Ms, loadCell(m.quiet)]);
    }
  }
  report(
    "Browsing a workspace (the dashboard's reads)",
    formatTable(['memories', 'operation', 'p50 ms', 'p99 ms', 'load'], rows),
    'what each list, timeline, summary and overview costs inside the shard as a workspace grows (docs/architecture-notes.md, "Browsing a workspace").',
    [BUSY_NOTE, 'in-process: the shard op itself, no worker hop or JSON'],
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
