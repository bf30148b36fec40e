/**
 * @module pages/graph — the neighbourhood of a memory (depth, edge types, direction, max nodes),
 * drawn with Cytoscape.js; clicking a node re-centres on it. A list of the same nodes gives
 * keyboard users the same moves.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Core } from 'cytoscape';
import type { Edge, GraphBody, GraphResponse } from '../../../clients/typescript/src/index.ts';
import { clip, shortId } from '../format.ts';
import { drawGraph, EDGE_STYLES, restyle } from '../graph-view.ts';
import { href, navigate } from '../router.ts';
import type { Session } from '../session.ts';
import { ErrorBanner, MemorySummary, Notice, useAsync } from '../ui.tsx';

const EDGE_TYPES = Object.keys(EDGE_STYLES) as Array<Edge['edge_type']>;

export function GraphPage({ session, center }: { session: Session; center: string | null }) {
  const [depth, setDepth] = useState(2);
  const [maxNodes, setMaxNodes] = useState(100);
  const [direction, setDirection] = useState<'both' | 'out' | 'in'>('both');
  const [types, setTypes] = useState<Set<Edge['edge_type']>>(new Set(EDGE_TYPES));
  const body: GraphBody = { center_id: center ?? '', depth, max_nodes: maxNodes, direction };
  if (types.size < EDGE_TYPES.length) body.edge_types = [...types];
  const graph = useAsync(async () => (center === null || types.size === 0 ? null : session.client.graph(body)), [session, center, depth, maxNodes, direction, [...types].join()]);
  const toggle = (t: Edge['edge_type']): void => {
    const next = new Set(types);
    if (next.has(t)) next.delete(t);
    else next.add(t);
    setTypes(next);
  };
  return (
    <>
      <h1>Graph {center !== null && <span class="sub">around <a href={href('memories', center)}>{shortId(center)}</a></span>}</h1>
      <div class="row filters">
        <label>Depth <input type="number" min="1" max="10" value={depth} class="narrow" onInput={(e) => setDepth(clampInt(e.currentTarget.value, 1, 10))} /></label>
        <label>Max nodes <input type="number" min="1" max="1000" value={maxNodes} class="narrow" onInput={(e) => setMaxNodes(clampInt(e.currentTarget.value, 1, 1000))} /></label>
        <label>Direction
          <select value={direction} onChange={(e) => setDirection(e.currentTarget.value as 'both' | 'out' | 'in')}>
            <option value="both">both</option><option value="out">out</option><option value="in">in</option>
          </select>
        </label>
      </div>
      <fieldset class="legend">
        <legend>Edge types</legend>
        {EDGE_TYPES.map((t) => (
          <label key={t} class="check">
            <input type="checkbox" checked={types.has(t)} onChange={() => toggle(t)} />
            <span class="swatch" style={{ borderTop: `3px ${EDGE_STYLES[t].line} ${EDGE_STYLES[t].color}` }} /> {t}
          </label>
        ))}
      </fieldset>
      {center === null ? <PickCenter session={session} /> : (
        <>
          <ErrorBanner error={graph.error} />
          {graph.data && <GraphCanvas data={graph.data} center={center} />}
          {graph.data && <NodeList data={graph.data} center={center} />}
        </>
      )}
    </>
  );
}

function clampInt(text: string, min: number, max: number): number {
  const n = Math.round(Number(text));
  return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : min;
}

function GraphCanvas({ data, center }: { data: GraphResponse; center: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let cy: Core | null = null;
    let live = true;
    const isDark = (): boolean => document.documentElement.dataset['theme'] === 'dark';
    const dark = isDark();
    // The theme switch lives in the header; follow it without redrawing the layout.
    const themes = new MutationObserver(() => cy && restyle(cy, isDark()));
    themes.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    if (box.current) {
      drawGraph(box.current, { center, nodes: data.nodes, edges: data.edges, dark }, (id) => id !== center && navigate(href('graph', id))).then(
        (c) => (live ? (cy = c) : c.destroy()),
        (err: unknown) => setError(`Cannot draw the graph: ${(err as Error).message}`),
      );
    }
    return () => {
      live = false;
      themes.disconnect();
      cy?.destroy();
    };
  }, [data, center]);
  return (
    <>
      <ErrorBanner error={error} />
      <p role="status" id="graph-status">{data.nodes.length} nodes, {data.edges.length} edges{data.truncated ? ' (truncated at max nodes)' : ''}. Click a node to centre on it.</p>
      <div ref={box} class="graph" id="graph-canvas" role="img" aria-label={`Graph of ${data.nodes.length} memories; the list below has the same nodes`} />
    </>
  );
}

function NodeList({ data, center }: { data: GraphResponse; center: string }) {
  const degree = new Map<string, number>();
  for (const e of data.edges) for (const id of [e.source_id, e.target_id]) degree.set(id, (degree.get(id) ?? 0) + 1);
  return (
    <section aria-labelledby="nodes-h">
      <h2 id="nodes-h">Nodes</h2>
      <ul class="nodes" id="graph-nodes">
        {data.nodes.map((m) => (
          <li key={m.memory_id} class={m.memory_id === center ? 'center' : ''}>
            {m.memory_id === center ? <b>centre</b> : <a href={href('graph', m.memory_id)}>centre here</a>}
            {' · '}<a href={href('memories', m.memory_id)}>{clip(m.content, 120)}</a> <small>({m.kind}, {degree.get(m.memory_id) ?? 0} edges)</small>
          </li>
        ))}
      </ul>
    </section>
  );
}

function PickCenter({ session }: { session: Session }) {
  const recent = useAsync(() => session.client.list({ limit: 20 }), [session]);
  return (
    <section>
      <p>Pick a memory to centre the graph on (or use “Open graph” on a memory's page).</p>
      <ErrorBanner error={recent.error} />
      {recent.data?.memories.length === 0 && <Notice>No memories yet.</Notice>}
      {recent.data?.memories.map((m) => (
        <MemorySummary key={m.memory_id} memory={m}><a href={href('graph', m.memory_id)}>Centre graph here</a></MemorySummary>
      ))}
    </section>
  );
}
