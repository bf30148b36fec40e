/**
 * @module graph/layout — a force-directed layout of a few hundred nodes, in a fixed number of
 * steps and the same way every time for the same graph (seeded from the ids): nodes push each
 * other apart (and never overlap), edges pull their ends together, and nodes of one cluster (an
 * entity, an insight and its sources) are drawn to their cluster's centre, so clusters read as
 * groups. Repulsion is local (a grid of cells), so a step costs about O(n · neighbours).
 */

export interface LayoutNode {
  id: string;
  radius: number;
  /** The cluster the node belongs to (null: none). */
  group: string | null;
}

export interface LayoutEdge {
  source: string;
  target: string;
}

export interface Point {
  x: number;
  y: number;
}

/** A small, fast, seeded generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * Positions for `nodes`, centred on (0, 0). `pinned` stays at the centre (a graph's centre
 * memory); `spacing` is the edge length the layout aims at.
 */
export function layout(
  nodes: readonly LayoutNode[],
  edges: readonly LayoutEdge[],
  opts: { pinned?: string | null; spacing?: number } = {},
): Map<string, Point> {
  const n = nodes.length;
  const out = new Map<string, Point>();
  if (n === 0) return out;
  const spacing = opts.spacing ?? 70;
  const random = rng(hash(nodes.map((x) => x.id).join(',')));
  const index = new Map(nodes.map((x, i) => [x.id, i]));
  // Clusters, largest first, with their centres on a sunflower spiral scaled by their size.
  const groups = new Map<string, number[]>();
  nodes.forEach((x, i) => {
    if (x.group !== null) groups.set(x.group, [...(groups.get(x.group) ?? []), i]);
  });
  const order = [...groups.entries()].sort((a, b) => b[1].length - a[1].length);
  const groupOf = new Int32Array(n).fill(-1);
  const centres: Point[] = [];
  // A cluster of m nodes settles in a disc of radius about 0.5 · spacing · √m: each next cluster goes
  // on a golden-angle spiral at the radius that holds the ones before it.
  let placed = 0;
  order.forEach(([, members], g) => {
    const r = g === 0 ? 0 : spacing * 0.75 * (Math.sqrt(placed) + Math.sqrt(members.length));
    const a = g * 2.399963; // the golden angle
    centres.push({ x: r * Math.cos(a), y: r * Math.sin(a) });
    placed += members.length;
    for (const i of members) groupOf[i] = g;
  });
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  const spread = spacing * Math.sqrt(n) * 0.5;
  for (let i = 0; i < n; i++) {
    const c = groupOf[i] === -1 ? { x: 0, y: 0 } : (centres[groupOf[i] as number] as Point);
    const s =
      groupOf[i] === -1
        ? spread
        : spacing * Math.sqrt(groups.get(order[groupOf[i] as number]?.[0] ?? '')?.length ?? 1);
    xs[i] = c.x + (random() - 0.5) * s;
    ys[i] = c.y + (random() - 0.5) * s;
  }
  const pinned = opts.pinned == null ? -1 : (index.get(opts.pinned) ?? -1);
  const links = edges.flatMap((e) => {
    const s = index.get(e.source);
    const t = index.get(e.target);
    return s === undefined || t === undefined || s === t ? [] : [[s, t] as const];
  });
  const radius = Float64Array.from(nodes, (x) => x.radius);
  const steps = n > 300 ? 160 : n > 100 ? 220 : 300;
  const k2 = spacing * spacing;
  const dx = new Float64Array(n);
  const dy = new Float64Array(n);
  for (let step = 0; step < steps; step++) {
    const heat = spacing * 0.9 * (1 - step / steps) + 0.5;
    dx.fill(0);
    dy.fill(0);
    // Repulsion reaches 3.5 spacings (beyond, gravity and the clusters' pull hold the layout
    // together): nodes go into a grid of cells that wide, and each meets the nine cells around it.
    const cell = spacing * 3.5;
    const grid = new Map<number, number[]>();
    const keyOf = (gx: number, gy: number): number => (gx + 32768) * 65536 + (gy + 32768);
    for (let i = 0; i < n; i++) {
      const key = keyOf(Math.floor((xs[i] as number) / cell), Math.floor((ys[i] as number) / cell));
      const list = grid.get(key);
      if (list) list.push(i);
      else grid.set(key, [i]);
    }
    for (let i = 0; i < n; i++) {
      const gx = Math.floor((xs[i] as number) / cell);
      const gy = Math.floor((ys[i] as number) / cell);
      for (let ox = -1; ox <= 1; ox++) {
        for (let oy = -1; oy <= 1; oy++) {
          for (const j of grid.get(keyOf(gx + ox, gy + oy)) ?? []) {
            if (j <= i) continue;
            let ux = (xs[i] as number) - (xs[j] as number);
            let uy = (ys[i] as number) - (ys[j] as number);
            let d2 = ux * ux + uy * uy;
            if (d2 > cell * cell) continue;
            if (d2 < 1e-6) {
              ux = random() - 0.5;
              uy = random() - 0.5;
              d2 = ux * ux + uy * uy;
            }
            const d = Math.sqrt(d2);
            const near = (radius[i] as number) + (radius[j] as number) + 14;
            // Fruchterman-Reingold repulsion fading out towards the cut-off, and a hard push when circles overlap.
            let f = (k2 / d) * (1 - d / cell);
            if (d < near) f += (near - d) * 4;
            const fx = (ux / d) * f;
            const fy = (uy / d) * f;
            dx[i] = (dx[i] as number) + fx;
            dy[i] = (dy[i] as number) + fy;
            dx[j] = (dx[j] as number) - fx;
            dy[j] = (dy[j] as number) - fy;
          }
        }
      }
    }
    for (const [s, t] of links) {
      const ux = (xs[s] as number) - (xs[t] as number);
      const uy = (ys[s] as number) - (ys[t] as number);
      const d = Math.sqrt(ux * ux + uy * uy) || 1;
      const f = (d * d) / spacing;
      dx[s] = (dx[s] as number) - (ux / d) * f;
      dy[s] = (dy[s] as number) - (uy / d) * f;
      dx[t] = (dx[t] as number) + (ux / d) * f;
      dy[t] = (dy[t] as number) + (uy / d) * f;
    }
    // Each cluster pulls its members to its current centre; everything drifts gently to (0, 0).
    const cx = new Float64Array(centres.length);
    const cy = new Float64Array(centres.length);
    const cn = new Float64Array(centres.length);
    for (let i = 0; i < n; i++) {
      const g = groupOf[i] as number;
      if (g < 0) continue;
      cx[g] = (cx[g] as number) + (xs[i] as number);
      cy[g] = (cy[g] as number) + (ys[i] as number);
      cn[g] = (cn[g] as number) + 1;
    }
    for (let i = 0; i < n; i++) {
      const g = groupOf[i] as number;
      if (g >= 0) {
        dx[i] =
          (dx[i] as number) + ((cx[g] as number) / (cn[g] as number) - (xs[i] as number)) * 0.25;
        dy[i] =
          (dy[i] as number) + ((cy[g] as number) / (cn[g] as number) - (ys[i] as number)) * 0.25;
      }
      dx[i] = (dx[i] as number) - (xs[i] as number) * 0.06;
      dy[i] = (dy[i] as number) - (ys[i] as number) * 0.06;
    }
    for (let i = 0; i < n; i++) {
      if (i === pinned) continue;
      const mx = dx[i] as number;
      const my = dy[i] as number;
      const m = Math.sqrt(mx * mx + my * my);
      if (m === 0) continue;
      const move = Math.min(m, heat);
      xs[i] = (xs[i] as number) + (mx / m) * move;
      ys[i] = (ys[i] as number) + (my / m) * move;
    }
    if (pinned >= 0) {
      xs[pinned] = 0;
      ys[pinned] = 0;
    }
  }
  nodes.forEach((x, i) => {
    out.set(x.id, { x: xs[i] as number, y: ys[i] as number });
  });
  return out;
}
