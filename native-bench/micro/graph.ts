/**
 * @module native-bench/micro/graph — graph operations over a workspace with 1M edges, in-process:
 * the POST /v1/graph shard op (graph(), depth 5, max_nodes 500, both directions) and the causal
 * recall walk (recall/strategies causal() over the shard's RecallSource, and the whole recall op
 * with merging and scoring), from random memories and from the most connected hub. Target: p99
 * under 20 ms.
 *
 *   node --import tsx native-bench/micro/graph.ts [--quick] [--edges 1000000]
 */
import { numberFlag } from '../lib/args.ts';
import { Rng } from '../lib/prng.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import type { EdgeType } from '../../src/model/edge.ts';
import { IdGenerator } from '../../src/model/ids.ts';
import { nowUs } from '../../src/model/memory.ts';
import { causal } from '../../src/recall/strategies.ts';
import { DEFAULT_WEIGHTS, type StrategySpec } from '../../src/recall/types.ts';
import type { OpContext } from '../../src/shard/ops/context.ts';
import { graph } from '../../src/shard/ops/graph.ts';
import { recall } from '../../src/shard/ops/recall.ts';
import { recallSource } from '../../src/shard/ops/recall-source.ts';
import { ShardState } from '../../src/shard/store/apply.ts';
import { microFlags, report } from './flags.ts';
import { buildGraph, degree } from './graph-fixture.ts';
import { measure, timed } from './measure.ts';
import { BUSY_NOTE, loadCell } from './quiet.ts';

const TARGET_P99_MS = 20;

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

function causalSpec(
  seedId: string,
  topK: number,
  edgeTypes: EdgeType[] | null = null,
): StrategySpec {
  return {
    strategy: 'causal',
    topK,
    efSearch: 50,
    entityId: null,
    timeRange: null,
    seedId,
    edgeTypes,
    maxDepth: 5,
    alpha: 0.5,
  };
}

function medianDegree(ws: Parameters<typeof degree>[0], ids: readonly string[]): number {
  const d = ids.map((id) => degree(ws, id)).sort((a, b) => a - b);
  return d[d.length >> 1] ?? 0;
}

async function main(): Promise<void> {
  const { quick, values } = microFlags(['edges']);
  const edges = numberFlag(values, 'edges', quick ? 200_000 : 1_000_000);
  const timeMs = quick ? 1000 : 3000;
  const built = await timed(() => buildGraph({ edges, perMemory: 5, hubs: 20, seed: 3 }));
  const { ws, ids, hub, hubDegree } = built.value;
  console.log(
    `  built ${ws.memories.size} memories, ${ws.graph.edgeCount} edges in ${(built.ms / 1000).toFixed(1)} s; hub degree ${hubDegree}`,
  );
  const state = new ShardState();
  state.workspaces.set(ws.slug, ws);
  const ctx = opContext(state);
  const src = recallSource(ws);
  const rng = new Rng(5);
  // Random start points among memories that have edges (a causal walk from a lone memory is an error).
  const linked = ids.filter((id) => degree(ws, id) > 0);
  const randomId = (): string => linked[rng.int(linked.length)] as string;
  const withCause = linked.filter((id) =>
    [...ws.graph.outgoing(id), ...ws.graph.incoming(id)].some((e) => e.edge_type === 'caused_by'),
  );
  const randomCauseId = (): string => withCause[rng.int(withCause.length)] as string;
  const cue = new Float32Array(384);
  const cases: Array<[string, string, () => unknown]> = [
    [
      'graph op, depth 5, max 500',
      'random',
      () =>
        graph(ctx, ws.slug, {
          centerId: randomId(),
          depth: 5,
          maxNodes: 500,
          edgeTypes: null,
          direction: 'both',
        }),
    ],
    [
      'graph op, depth 5, max 500',
      'hub',
      () =>
        graph(ctx, ws.slug, {
          centerId: hub,
          depth: 5,
          maxNodes: 500,
          edgeTypes: null,
          direction: 'both',
        }),
    ],
    ['causal walk, top 10', 'random', () => causal(src, cue, causalSpec(randomId(), 10))],
    ['causal walk, top 10', 'hub', () => causal(src, cue, causalSpec(hub, 10))],
    ['causal walk, top 100', 'hub', () => causal(src, cue, causalSpec(hub, 100))],
    [
      'causal walk, top 1000 (the cap)',
      'random',
      () => causal(src, cue, causalSpec(randomId(), 1000)),
    ],
    [
      'causal walk, top 1000, caused_by only',
      'random',
      () => causal(src, cue, causalSpec(randomCauseId(), 1000, ['caused_by'])),
    ],
    [
      'causal walk, top 100, caused_by only',
      'hub',
      () => causal(src, cue, causalSpec(hub, 100, ['caused_by'])),
    ],
    [
      'recall op (causal, scored), top 10',
      'hub',
      () =>
        recall(ctx, ws.slug, {
          cue,
          cueText: '',
          similarityMode: 'dense',
          cueContext: null,
          strategies: [causalSpec(hub, 10)],
          weights: DEFAULT_WEIGHTS,
          withEmbedding: false,
        }),
    ],
  ];
  const rows: Cell[][] = [];
  for (const [what, from, fn] of cases) {
    const m = await measure(`${what} from ${from}`, fn, { timeMs, iterations: 200 });
    rows.push([
      what,
      from,
      m.p50Ms,
      m.p99Ms,
      m.p99Ms <= TARGET_P99_MS ? 'yes' : 'NO',
      loadCell(m.quiet),
    ]);
  }
  report(
    `Graph traversal (${ws.memories.size.toLocaleString('en')} memories, ${ws.graph.edgeCount.toLocaleString('en')} edges, hub degree ${hubDegree}, median degree ${medianDegree(ws, linked)})`,
    formatTable(
      ['operation', 'from', 'p50 ms', 'p99 ms', `p99 ≤ ${TARGET_P99_MS} ms`, 'load'],
      rows,
    ),
    'whether graph queries and causal walks stay within the 20 ms p99 target on a 1M-edge workspace, hubs included.',
    [
      BUSY_NOTE,
      'in-process: the shard op itself, no worker hop or JSON; "hub" = the most connected memory',
    ],
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
