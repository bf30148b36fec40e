/**
 * @module native-bench/micro/graph-fixture — a workspace with a large, hub-heavy edge graph,
 * built in-process through Workspace.put and Graph.put (what log replay does):
 * each new memory links to `perMemory` earlier ones: 40% to a recent one (chains of
 * caused_by / followed_by), 40% to an endpoint of an existing edge (preferential attachment, so
 * degrees are heavy-tailed), 20% to one of `hubs` hub memories (entities or documents that many
 * memories point at, via has_entity / proposition_of / related_to).
 */
import type { EdgeType } from '../../src/model/edge.ts';
import { IdGenerator } from '../../src/model/ids.ts';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { Workspace } from '../../src/shard/store/workspace.ts';
import { Rng } from '../lib/prng.ts';

const LOCAL: readonly EdgeType[] = ['caused_by', 'followed_by'];
const SPREAD: readonly EdgeType[] = ['related_to', 'caused_by', 'revised_from', 'entity_relation'];
const TO_HUB: readonly EdgeType[] = ['has_entity', 'proposition_of', 'related_to'];

export interface GraphFixture {
  ws: Workspace;
  ids: string[];
  /** The memory with the most edges. */
  hub: string;
  hubDegree: number;
}

export function memory(
  id: string,
  createdAt: number,
  embedding: Float32Array,
  content = `memory ${id}`,
): MemoryRecord {
  return {
    id,
    content,
    importance: 0.5,
    context: { source: 'bench' },
    entityId: null,
    kind: 'episode',
    embedding,
    createdAt,
    updatedAt: createdAt,
    lastAccessedAt: createdAt,
    accessCount: 0,
    logicalClock: 0,
    sourceMemoryIds: null,
    supersededBy: null,
    expiresAt: null,
    occurredAt: createdAt,
    speaker: null,
    conversationId: null,
    messageId: null,
  };
}

export function buildGraph(opts: {
  edges: number;
  perMemory: number;
  hubs: number;
  seed: number;
}): GraphFixture {
  const rng = new Rng(opts.seed);
  const ws = new Workspace('bench');
  const gen = new IdGenerator();
  // Graph operations never read embeddings: one shared vector keeps the fixture small.
  const shared = new Float32Array(384).fill(1 / Math.sqrt(384));
  // A little slack: a duplicate (source, target, type) is skipped, and the edge target must be met.
  const count = Math.ceil((opts.edges / opts.perMemory) * 1.02) + opts.hubs;
  const t0 = Date.now() - count;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = gen.next(t0 + i);
    ids.push(id);
    ws.put(memory(id, (t0 + i) * 1000, shared));
  }
  const endpoints: number[] = [];
  let made = 0;
  for (let i = opts.hubs + 1; i < count && made < opts.edges; i++) {
    for (let j = 0; j < opts.perMemory && made < opts.edges; j++) {
      const roll = rng.next();
      let target: number;
      let type: EdgeType;
      if (roll < 0.4)
        [target, type] = [i - 1 - rng.int(Math.min(50, i - opts.hubs)), rng.pick(LOCAL)];
      else if (roll < 0.8 && endpoints.length > 0)
        [target, type] = [endpoints[rng.int(endpoints.length)] as number, rng.pick(SPREAD)];
      else [target, type] = [rng.int(opts.hubs), rng.pick(TO_HUB)];
      if (target === i) continue;
      const before = ws.graph.edgeCount;
      ws.graph.put({
        source_id: ids[i] as string,
        target_id: ids[target] as string,
        edge_type: type,
        confidence: 0.9,
        timestamp_us: (t0 + i) * 1000,
      });
      if (ws.graph.edgeCount === before) continue;
      endpoints.push(i, target);
      made += 1;
    }
  }
  let hub = ids[0] as string;
  let hubDegree = 0;
  for (const id of ids) {
    const d = ws.graph.outgoing(id).length + ws.graph.incoming(id).length;
    if (d > hubDegree) [hub, hubDegree] = [id, d];
  }
  return { ws, ids, hub, hubDegree };
}

/** Edges touching a memory, both directions. */
export function degree(ws: Workspace, id: string): number {
  return ws.graph.outgoing(id).length + ws.graph.incoming(id).length;
}
