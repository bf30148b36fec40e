/**
 * @module pages/graph — the graph two ways. Without a centre (`#/graph`): the workspace's, or an
 * entity's, most important memories and the edges among them, clustered by entity or by insight,
 * "showing N of M"; a click opens the memory. Around a memory (`#/graph/<id>`): its neighbourhood
 * (depth, edge types, direction, max nodes); a click re-centres. Both list the same nodes as links
 * for keyboard and screen-reader users.
 */
import { useMemo } from 'preact/hooks';
import type {
  Edge,
  GraphBody,
  GraphOverviewBody,
  Memory,
} from '../../../clients/typescript/src/index.ts';
import { ApiPanel } from '../api-panel.tsx';
import { clip, plural, shortId } from '../format.ts';
import { EDGE_STYLES, EDGE_TYPES } from '../graph/styles.ts';
import { SvgGraph } from '../graph/svg-graph.tsx';
import { href, navigate, setQuery, type Location } from '../router.ts';
import type { Session } from '../session.ts';
import { ErrorBanner, Notice, useAsync } from '../ui.tsx';

const KINDS: ReadonlyArray<Memory['kind']> = [
  'episode',
  'insight',
  'revision',
  'document',
  'proposition',
];

function clampInt(text: string | null, min: number, max: number, def: number): number {
  const n = Math.round(Number(text ?? NaN));
  return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : def;
}

/** Edge types from the view's query (`types=a,b`; absent: all). */
function typesOf(loc: Location): Set<Edge['edge_type']> {
  const t = loc.query.get('types');
  return new Set(
    t === null
      ? EDGE_TYPES
      : (t.split(',').filter((x) => (EDGE_TYPES as string[]).includes(x)) as Array<
          Edge['edge_type']
        >),
  );
}

function EdgeTypeFilter({ loc, types }: { loc: Location; types: Set<Edge['edge_type']> }) {
  const toggle = (t: Edge['edge_type']): void => {
    const next = new Set(types);
    if (next.has(t)) next.delete(t);
    else next.add(t);
    setQuery(loc, {
      types: next.size === EDGE_TYPES.length ? undefined : [...next].join(',') || 'none',
    });
  };
  return (
    <fieldset class="legend">
      <legend>Edge types</legend>
      {EDGE_TYPES.map((t) => (
        <label key={t} class="check">
          <input type="checkbox" checked={types.has(t)} onChange={() => toggle(t)} />
          <span
            class="swatch"
            style={{
              borderTop: `3px ${EDGE_STYLES[t].dash === '' ? 'solid' : EDGE_STYLES[t].dash === '2 4' ? 'dotted' : 'dashed'} ${EDGE_STYLES[t].color}`,
            }}
          />{' '}
          {t}
        </label>
      ))}
    </fieldset>
  );
}

export function GraphPage({
  session,
  center,
  loc,
}: {
  session: Session;
  center: string | null;
  loc: Location;
}) {
  return center === null ? (
    <Overview session={session} loc={loc} />
  ) : (
    <Neighbourhood session={session} center={center} loc={loc} />
  );
}

/** Clusters: an insight with the memories it was drawn from. */
function insightGroups(nodes: readonly Memory[], edges: readonly Edge[]): Map<string, string> {
  const kind = new Map(nodes.map((m) => [m.memory_id, m.kind]));
  const out = new Map<string, string>();
  for (const m of nodes) if (m.kind === 'insight') out.set(m.memory_id, m.memory_id);
  for (const e of edges) {
    if (e.edge_type !== 'insight_from') continue;
    const [insight, source] =
      kind.get(e.source_id) === 'insight' ? [e.source_id, e.target_id] : [e.target_id, e.source_id];
    if (!out.has(source)) out.set(source, insight);
  }
  return out;
}

function Overview({ session, loc }: { session: Session; loc: Location }) {
  const q = loc.query;
  const entity = q.get('entity') ?? '';
  const kind = q.get('kind') ?? '';
  const max = clampInt(q.get('max'), 10, 500, 100);
  const cluster = q.get('cluster') ?? 'entity';
  const types = typesOf(loc);
  const body: GraphOverviewBody = {
    max_nodes: max,
    ...(entity === '' ? {} : { entity_id: entity }),
    ...((KINDS as string[]).includes(kind) ? { kind: kind as Memory['kind'] } : {}),
  };
  if (types.size < EDGE_TYPES.length && types.size > 0) body.edge_types = [...types];
  const data = useAsync(
    async () => (types.size === 0 ? null : session.client.graphOverview(body)),
    [session, JSON.stringify(body)],
  );
  const entities = useAsync(
    async () =>
      (await session.client.entitySummaries({ sort: 'memories', limit: 1000 })).entities.map(
        (e) => e.entity_id,
      ),
    [session],
  );
  const groups = useMemo(
    () => (data.data ? insightGroups(data.data.nodes, data.data.edges) : new Map<string, string>()),
    [data.data],
  );
  const byId = useMemo(
    () => new Map((data.data?.nodes ?? []).map((m) => [m.memory_id, m])),
    [data.data],
  );
  const groupOf = useMemo(
    () =>
      cluster === 'insight'
        ? (m: Memory) => groups.get(m.memory_id) ?? null
        : cluster === 'entity'
          ? (m: Memory) => m.entity_id
          : () => null,
    [cluster, groups],
  );
  const groupName = (g: string): string =>
    cluster === 'insight' ? `insight: ${clip(byId.get(g)?.content ?? shortId(g), 40)}` : g;
  return (
    <>
      <h1>
        Graph{' '}
        <span class="sub">
          {entity === '' ? `of ${session.workspace}` : `around entity ${entity}`}
        </span>
      </h1>
      <form class="row filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Entity
          <input
            id="graph-entity"
            class="narrow"
            list="graph-entity-ids"
            defaultValue={entity}
            onChange={(e) => setQuery(loc, { entity: e.currentTarget.value })}
          />
          <datalist id="graph-entity-ids">
            {(entities.data ?? []).map((id) => (
              <option key={id} value={id} />
            ))}
          </datalist>
        </label>
        <label>
          Kind
          <select value={kind} onChange={(e) => setQuery(loc, { kind: e.currentTarget.value })}>
            <option value="">any</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label>
          Max nodes
          <select
            id="graph-max"
            value={String(max)}
            onChange={(e) =>
              setQuery(loc, {
                max: e.currentTarget.value === '100' ? undefined : e.currentTarget.value,
              })
            }
          >
            {[25, 50, 100, 200, 500].map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label>
          Cluster by
          <select
            id="graph-cluster"
            value={cluster}
            onChange={(e) =>
              setQuery(loc, {
                cluster: e.currentTarget.value === 'entity' ? undefined : e.currentTarget.value,
              })
            }
          >
            <option value="entity">entity</option>
            <option value="insight">insight</option>
            <option value="none">nothing</option>
          </select>
        </label>
      </form>
      <EdgeTypeFilter loc={loc} types={types} />
      <ErrorBanner error={data.error} />
      {types.size === 0 && <Notice>Pick at least one edge type.</Notice>}
      {data.data && (
        <>
          <p role="status" id="graph-status">
            Showing {data.data.nodes.length} of{' '}
            {plural(data.data.total_nodes, 'memory', 'memories')}
            {data.data.truncated
              ? ' (the most important; raise max nodes or pick an entity to see others)'
              : ''}
            , {plural(data.data.edges.length, 'edge', 'edges')}. Click a node to open the memory.
          </p>
          {data.data.nodes.length === 0 ? (
            <Notice>No memories yet.</Notice>
          ) : (
            <SvgGraph
              nodes={data.data.nodes}
              edges={data.data.edges}
              groupOf={groupOf}
              groupName={groupName}
              onPick={(id) => navigate(href('memories', id))}
              label={`Graph of ${data.data.nodes.length} memories`}
            />
          )}
          <NodeList
            nodes={data.data.nodes}
            edges={data.data.edges}
            center={null}
            groupOf={groupOf}
            groupName={groupName}
          />
        </>
      )}
      <ApiPanel session={session} call={{ op: 'graph_overview', body }} what="this graph" />
    </>
  );
}

function Neighbourhood({
  session,
  center,
  loc,
}: {
  session: Session;
  center: string;
  loc: Location;
}) {
  const q = loc.query;
  const depth = clampInt(q.get('depth'), 1, 5, 2);
  const maxNodes = clampInt(q.get('max'), 1, 500, 100);
  const direction =
    (['both', 'out', 'in'] as const).find((d) => d === q.get('direction')) ?? 'both';
  const types = typesOf(loc);
  const body: GraphBody = { center_id: center, depth, max_nodes: maxNodes, direction };
  if (types.size < EDGE_TYPES.length) body.edge_types = [...types];
  const graph = useAsync(
    async () => (types.size === 0 ? null : session.client.graph(body)),
    [session, JSON.stringify(body)],
  );
  return (
    <>
      <h1>
        Graph{' '}
        <span class="sub">
          around <a href={href('memories', center)}>{shortId(center)}</a> ·{' '}
          <a href={href('graph')}>whole workspace</a>
        </span>
      </h1>
      <div class="row filters">
        <label>
          Depth{' '}
          <input
            type="number"
            min="1"
            max="5"
            value={depth}
            class="narrow"
            onChange={(e) => setQuery(loc, { depth: e.currentTarget.value })}
          />
        </label>
        <label>
          Max nodes{' '}
          <input
            type="number"
            min="1"
            max="500"
            value={maxNodes}
            class="narrow"
            onChange={(e) => setQuery(loc, { max: e.currentTarget.value })}
          />
        </label>
        <label>
          Direction
          <select
            value={direction}
            onChange={(e) =>
              setQuery(loc, {
                direction: e.currentTarget.value === 'both' ? undefined : e.currentTarget.value,
              })
            }
          >
            <option value="both">both</option>
            <option value="out">out</option>
            <option value="in">in</option>
          </select>
        </label>
      </div>
      <EdgeTypeFilter loc={loc} types={types} />
      <ErrorBanner error={graph.error} />
      {graph.data && (
        <>
          <p role="status" id="graph-status">
            {graph.data.nodes.length} nodes, {graph.data.edges.length} edges
            {graph.data.truncated ? ' (truncated at max nodes)' : ''}. Click a node to centre on it.
          </p>
          <SvgGraph
            nodes={graph.data.nodes}
            edges={graph.data.edges}
            center={center}
            onPick={(id) => id !== center && navigate(href('graph', id))}
            label={`Graph of ${graph.data.nodes.length} memories around ${shortId(center)}`}
          />
          <NodeList nodes={graph.data.nodes} edges={graph.data.edges} center={center} />
        </>
      )}
      <ApiPanel session={session} call={{ op: 'graph', body }} what="this graph" />
    </>
  );
}

function NodeList({
  nodes,
  edges,
  center,
  groupOf,
  groupName,
}: {
  nodes: readonly Memory[];
  edges: readonly Edge[];
  center: string | null;
  groupOf?: (m: Memory) => string | null;
  groupName?: (g: string) => string;
}) {
  const degree = new Map<string, number>();
  for (const e of edges)
    for (const id of [e.source_id, e.target_id]) degree.set(id, (degree.get(id) ?? 0) + 1);
  const grouped = new Map<string, Memory[]>();
  for (const m of nodes) {
    const g = groupOf?.(m) ?? '';
    grouped.set(g, [...(grouped.get(g) ?? []), m]);
  }
  const sections = [...grouped].sort((a, b) =>
    a[0] === '' ? 1 : b[0] === '' ? -1 : b[1].length - a[1].length,
  );
  return (
    <details class="panel" open={nodes.length <= 12}>
      <summary id="nodes-h">Nodes as a list ({nodes.length})</summary>
      {sections.map(([g, ms]) => (
        <div key={g}>
          {sections.length > 1 && (
            <h3>
              {g === '' ? 'In no cluster' : (groupName?.(g) ?? g)} ({ms.length})
            </h3>
          )}
          <ul class="nodes" id={g === sections[0]?.[0] ? 'graph-nodes' : undefined}>
            {ms.map((m) => (
              <li key={m.memory_id} class={m.memory_id === center ? 'center' : ''}>
                {m.memory_id === center ? (
                  <b>centre</b>
                ) : (
                  <a href={href('graph', m.memory_id)}>centre here</a>
                )}
                {' · '}
                <a href={href('memories', m.memory_id)}>{clip(m.content, 120)}</a>{' '}
                <small>
                  ({m.kind}, importance {m.importance.toFixed(2)}, {degree.get(m.memory_id) ?? 0}{' '}
                  edges)
                </small>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </details>
  );
}
