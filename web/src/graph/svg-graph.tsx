/**
 * @module graph/svg-graph — draws memories and their edges as SVG: nodes sized by importance and
 * coloured by kind, edges coloured and dashed by type with arrows, clusters as soft circles with
 * their name, labels on the most important nodes (and on the one under the pointer or focus) at a
 * size that stays readable whatever the zoom. Drag to pan, wheel or the buttons to zoom; from the
 * keyboard (the drawing is one tab stop) +/− zoom, arrows pan, 0 fits; the page lists the same
 * nodes as links. Clicking a node calls `onPick`.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Edge, Memory } from '../../../clients/typescript/src/index.ts';
import { clip } from '../format.ts';
import { layout, type Point } from './layout.ts';
import { EDGE_STYLES, EDGE_TYPES, KIND_COLORS } from './styles.ts';

export interface GraphProps {
  nodes: readonly Memory[];
  edges: readonly Edge[];
  center?: string | null;
  /** The cluster of a node (null: none) and how a cluster is named. */
  groupOf?: (m: Memory) => string | null;
  groupName?: (group: string) => string;
  onPick: (id: string) => void;
  /** What the drawing shows, for screen readers (the page lists the same nodes as links). */
  label: string;
  /** How many of the most important nodes carry a label (default 30). */
  labelled?: number;
}

interface View {
  k: number;
  x: number;
  y: number;
}

const radiusOf = (m: Memory): number => 7 + m.importance * 13 + (m.kind === 'insight' ? 3 : 0);

export function SvgGraph(props: GraphProps) {
  const { nodes, edges, center = null } = props;
  const groupOf = props.groupOf ?? (() => null);
  const pos = useMemo(
    () =>
      layout(
        nodes.map((m) => ({ id: m.memory_id, radius: radiusOf(m), group: groupOf(m) })),
        edges.map((e) => ({ source: e.source_id, target: e.target_id })),
        { pinned: center },
      ),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [nodes, edges, center, props.groupOf],
  );
  const groups = useMemo(() => hulls(nodes, pos, groupOf), [nodes, pos, props.groupOf]);
  const box = useMemo(() => bounds(nodes, pos, groups), [nodes, pos, groups]);
  const [view, setView] = useState<View>({ k: 1, x: 0, y: 0 });
  const [hover, setHover] = useState<string | null>(null);
  const svg = useRef<SVGSVGElement>(null);
  const drag = useRef<{ x: number; y: number; view: View; moved: boolean } | null>(null);
  useEffect(() => setView({ k: 1, x: 0, y: 0 }), [box]);
  // Screen pixels per graph unit at zoom 1, so that text keeps its size on screen.
  const [pixels, setPixels] = useState(1);
  useEffect(() => {
    const el = svg.current;
    if (!el) return undefined;
    const measure = (): void => {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) setPixels(Math.min(r.width / box.w, r.height / box.h));
    };
    measure();
    const watch = new ResizeObserver(measure);
    watch.observe(el);
    return () => watch.disconnect();
  }, [box]);

  const byId = useMemo(() => new Map(nodes.map((m) => [m.memory_id, m])), [nodes]);
  const neighbours = useMemo(() => {
    const out = new Map<string, Set<string>>();
    for (const e of edges) {
      out.set(e.source_id, (out.get(e.source_id) ?? new Set()).add(e.target_id));
      out.set(e.target_id, (out.get(e.target_id) ?? new Set()).add(e.source_id));
    }
    return out;
  }, [edges]);
  const labelled = useMemo(() => {
    const ranked = [...nodes].sort(
      (a, b) =>
        b.importance - a.importance ||
        (neighbours.get(b.memory_id)?.size ?? 0) - (neighbours.get(a.memory_id)?.size ?? 0),
    );
    return new Set([
      ...ranked.slice(0, props.labelled ?? 30).map((m) => m.memory_id),
      ...(center === null ? [] : [center]),
    ]);
  }, [nodes, neighbours, center, props.labelled]);

  const zoom = (factor: number, at?: { x: number; y: number }): void =>
    setView((v) => {
      const k = Math.min(6, Math.max(0.25, v.k * factor));
      const cx = at?.x ?? box.x + box.w / 2;
      const cy = at?.y ?? box.y + box.h / 2;
      // Keep the point under the cursor where it is.
      return { k, x: cx - ((cx - v.x) * k) / v.k, y: cy - ((cy - v.y) * k) / v.k };
    });
  const toGraph = (clientX: number, clientY: number): { x: number; y: number } => {
    const r = svg.current?.getBoundingClientRect();
    if (!r) return { x: 0, y: 0 };
    const scale = Math.max(box.w / r.width, box.h / r.height);
    const offX = (r.width * scale - box.w) / 2;
    const offY = (r.height * scale - box.h) / 2;
    return {
      x: box.x - offX + (clientX - r.left) * scale,
      y: box.y - offY + (clientY - r.top) * scale,
    };
  };
  const onWheel = (e: WheelEvent): void => {
    e.preventDefault();
    zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, toGraph(e.clientX, e.clientY));
  };
  useEffect(() => {
    const el = svg.current;
    el?.addEventListener('wheel', onWheel, { passive: false });
    return () => el?.removeEventListener('wheel', onWheel);
  });
  const onKey = (e: KeyboardEvent): void => {
    const step = 40 / view.k;
    const moves: Record<string, () => void> = {
      '+': () => zoom(1.25),
      '=': () => zoom(1.25),
      '-': () => zoom(0.8),
      '0': () => setView({ k: 1, x: 0, y: 0 }),
      ArrowLeft: () => setView((v) => ({ ...v, x: v.x + step * v.k })),
      ArrowRight: () => setView((v) => ({ ...v, x: v.x - step * v.k })),
      ArrowUp: () => setView((v) => ({ ...v, y: v.y + step * v.k })),
      ArrowDown: () => setView((v) => ({ ...v, y: v.y - step * v.k })),
    };
    const move = e.target === svg.current ? moves[e.key] : undefined;
    if (move) {
      e.preventDefault();
      move();
    }
  };
  const focusedNeighbours = hover === null ? null : (neighbours.get(hover) ?? new Set<string>());
  const unit = 1 / (pixels * view.k); // one screen pixel, in graph units
  const fontSize = 12 * unit;
  const hullBoxes = groups.map((g) => {
    const w = Math.min(60, (props.groupName?.(g.group) ?? g.group).length) * 13 * unit * 0.6;
    return { x0: g.x - w / 2, y0: g.y - g.r - 20 * unit, x1: g.x + w / 2, y1: g.y - g.r };
  });
  const shown = placeLabels(nodes, labelled, pos, fontSize, hover, focusedNeighbours, hullBoxes);
  const used = new Set(edges.map((e) => e.edge_type));
  return (
    <div class="graph-wrap">
      <div class="graph-tools" role="group" aria-label="Zoom">
        <button type="button" onClick={() => zoom(1.25)} aria-label="Zoom in">
          +
        </button>
        <button type="button" onClick={() => zoom(0.8)} aria-label="Zoom out">
          −
        </button>
        <button type="button" onClick={() => setView({ k: 1, x: 0, y: 0 })}>
          Fit
        </button>
      </div>
      <svg
        ref={svg}
        class="graph"
        id="graph-canvas"
        tabIndex={0}
        role="group"
        aria-label={`${props.label}. Arrow keys pan, plus and minus zoom; the list below has the same memories as links.`}
        viewBox={`${box.x} ${box.y} ${box.w} ${box.h}`}
        preserveAspectRatio="xMidYMid meet"
        onKeyDown={onKey}
        onPointerDown={(e) => {
          if ((e.target as Element).closest('[data-node-id]')) return;
          drag.current = { x: e.clientX, y: e.clientY, view, moved: false };
          (e.currentTarget as Element).setPointerCapture(e.pointerId);
        }}
        onPointerMove={(e) => {
          const d = drag.current;
          if (!d) return;
          const a = toGraph(d.x, d.y);
          const b = toGraph(e.clientX, e.clientY);
          d.moved = true;
          setView({ ...d.view, x: d.view.x + (b.x - a.x), y: d.view.y + (b.y - a.y) });
        }}
        onPointerUp={() => (drag.current = null)}
      >
        <defs>
          {EDGE_TYPES.map((t) => (
            <marker
              key={t}
              id={`arrow-${t}`}
              viewBox="0 0 10 10"
              refX="9"
              refY="5"
              markerWidth="7"
              markerHeight="7"
              orient="auto-start-reverse"
            >
              <path d="M 0 0 L 10 5 L 0 10 z" fill={EDGE_STYLES[t].color} />
            </marker>
          ))}
        </defs>
        <g transform={`translate(${view.x} ${view.y}) scale(${view.k})`}>
          {groups.map((g) => (
            <g key={g.group} class="hull">
              <circle cx={g.x} cy={g.y} r={g.r} />
              <text
                x={g.x}
                y={g.y - g.r - 6 * unit}
                text-anchor="middle"
                style={{ fontSize: `${13 * unit}px`, strokeWidth: `${3.5 * unit}px` }}
              >
                {props.groupName?.(g.group) ?? g.group}
              </text>
            </g>
          ))}
          {edges.map((e) => {
            const a = pos.get(e.source_id);
            const b = pos.get(e.target_id);
            const target = byId.get(e.target_id);
            if (!a || !b || !target) return null;
            const d = Math.hypot(b.x - a.x, b.y - a.y) || 1;
            const cut = (radiusOf(target) + 2) / d;
            const s = EDGE_STYLES[e.edge_type];
            const dim = hover !== null && e.source_id !== hover && e.target_id !== hover;
            return (
              <line
                key={`${e.source_id}>${e.target_id}:${e.edge_type}`}
                class={`edge${dim ? ' dim' : ''}`}
                data-edge-type={e.edge_type}
                x1={a.x}
                y1={a.y}
                x2={b.x - (b.x - a.x) * cut}
                y2={b.y - (b.y - a.y) * cut}
                stroke={s.color}
                stroke-dasharray={s.dash}
                stroke-width={1.6 * unit * Math.sqrt(view.k)}
                marker-end={`url(#arrow-${e.edge_type})`}
              />
            );
          })}
          {nodes.map((m) => {
            const p = pos.get(m.memory_id);
            if (!p) return null;
            const r = radiusOf(m);
            const isCenter = m.memory_id === center;
            const dim =
              focusedNeighbours !== null &&
              m.memory_id !== hover &&
              !focusedNeighbours.has(m.memory_id);
            const show = shown.has(m.memory_id);
            return (
              <g
                key={m.memory_id}
                class={`node${isCenter ? ' center' : ''}${dim ? ' dim' : ''}`}
                data-node-id={m.memory_id}
                transform={`translate(${p.x} ${p.y})`}
                tabIndex={-1}
                role="link"
                aria-label={clip(m.content, 80)}
                onClick={() => props.onPick(m.memory_id)}
                onKeyDown={(e) => e.key === 'Enter' && props.onPick(m.memory_id)}
                onPointerEnter={() => setHover(m.memory_id)}
                onPointerLeave={() => setHover(null)}
                onFocus={() => setHover(m.memory_id)}
                onBlur={() => setHover(null)}
              >
                <title>{`${m.kind} · importance ${m.importance.toFixed(2)}\n${clip(m.content, 240)}`}</title>
                <circle r={r} fill={KIND_COLORS[m.kind]} />
                {show && (
                  <text
                    y={r + fontSize + 2 * unit}
                    text-anchor="middle"
                    style={{ fontSize: `${fontSize}px`, strokeWidth: `${3.5 * unit}px` }}
                  >
                    {clip(m.content, LABEL_CHARS)}
                  </text>
                )}
              </g>
            );
          })}
        </g>
      </svg>
      <ul class="legend-line" aria-label="Legend">
        {(Object.keys(KIND_COLORS) as Array<Memory['kind']>)
          .filter((k) => nodes.some((m) => m.kind === k))
          .map((k) => (
            <li key={k}>
              <span class="dot" style={{ background: KIND_COLORS[k] }} /> {k}
            </li>
          ))}
        {EDGE_TYPES.filter((t) => used.has(t)).map((t) => (
          <li key={t}>
            <span
              class="swatch"
              style={{
                borderTop: `3px ${EDGE_STYLES[t].dash === '' ? 'solid' : EDGE_STYLES[t].dash === '2 4' ? 'dotted' : 'dashed'} ${EDGE_STYLES[t].color}`,
              }}
            />{' '}
            {t}
          </li>
        ))}
      </ul>
    </div>
  );
}

const LABEL_CHARS = 36;

interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * The labels drawn: the hovered node and its neighbours first, then the most important nodes, each
 * only where it overlaps no label already placed (greedy, at the current text size).
 */
function placeLabels(
  nodes: readonly Memory[],
  labelled: Set<string>,
  pos: Map<string, Point>,
  font: number,
  hover: string | null,
  near: Set<string> | null,
  taken: ReadonlyArray<Box>,
): Set<string> {
  const wanted = [
    ...(hover === null ? [] : [hover]),
    ...(near ?? []),
    ...nodes
      .filter((m) => labelled.has(m.memory_id))
      .sort((a, b) => b.importance - a.importance)
      .map((m) => m.memory_id),
  ];
  const byId = new Map(nodes.map((m) => [m.memory_id, m]));
  const boxes: Box[] = [...taken];
  const out = new Set<string>();
  for (const id of wanted) {
    const m = byId.get(id);
    const p = pos.get(id);
    if (!m || !p || out.has(id)) continue;
    const w = Math.min(LABEL_CHARS, m.content.length) * font * 0.56;
    const top = p.y + radiusOf(m) + font * 0.2;
    const b = { x0: p.x - w / 2, y0: top, x1: p.x + w / 2, y1: top + font * 1.2 };
    if (id !== hover && boxes.some((o) => b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1))
      continue;
    boxes.push(b);
    out.add(id);
  }
  return out;
}

function bounds(
  nodes: readonly Memory[],
  pos: Map<string, Point>,
  groups: ReadonlyArray<{ x: number; y: number; r: number }>,
): { x: number; y: number; w: number; h: number } {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  const grow = (x: number, y: number, r: number): void => {
    x0 = Math.min(x0, x - r);
    y0 = Math.min(y0, y - r);
    x1 = Math.max(x1, x + r);
    y1 = Math.max(y1, y + r);
  };
  for (const m of nodes) {
    const p = pos.get(m.memory_id);
    if (p) grow(p.x, p.y, 0);
  }
  for (const g of groups) grow(g.x, g.y - 12, g.r + 12);
  if (!Number.isFinite(x0)) return { x: -100, y: -100, w: 200, h: 200 };
  const pad = 70;
  return {
    x: x0 - pad,
    y: y0 - pad,
    w: Math.max(200, x1 - x0 + 2 * pad),
    h: Math.max(160, y1 - y0 + 2 * pad),
  };
}

function hulls(
  nodes: readonly Memory[],
  pos: Map<string, Point>,
  groupOf: (m: Memory) => string | null,
): Array<{ group: string; x: number; y: number; r: number }> {
  const members = new Map<string, Point[]>();
  for (const m of nodes) {
    const g = groupOf(m);
    const p = pos.get(m.memory_id);
    if (g !== null && p) members.set(g, [...(members.get(g) ?? []), p]);
  }
  return [...members]
    .filter(([, ps]) => ps.length >= 2)
    .map(([group, ps]) => {
      const x = ps.reduce((a, p) => a + p.x, 0) / ps.length;
      const y = ps.reduce((a, p) => a + p.y, 0) / ps.length;
      const r = Math.max(...ps.map((p) => Math.hypot(p.x - x, p.y - y))) + 30;
      return { group, x, y, r };
    });
}
