/**
 * @module charts — two small SVG charts drawn here (no chart library): a line chart over time
 * (several series, a time axis, hover read-out, the last values in a table for screen readers)
 * and the timeline's bar chart, whose bars are one tab stop (arrow keys move between the bars that
 * hold memories, Enter or a click picks one).
 */
import { useRef, useState } from 'preact/hooks';

const W = 640;
const PAD = { l: 46, r: 10, t: 10, b: 24 };

export interface Series {
  name: string;
  color: string;
  /** Points in time order: t in ms since the epoch. */
  points: ReadonlyArray<{ t: number; v: number }>;
}

/** A round upper bound for an axis: 1, 2 or 5 times a power of ten. */
export function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** An axis label: at most three significant digits, no trailing zeros. */
export function fmtTick(v: number): string {
  return String(Number(v.toPrecision(3)));
}

export function fmtValue(v: number, unit = ''): string {
  const s =
    Number.isInteger(v) || v >= 100
      ? v.toFixed(0)
      : v >= 10
        ? v.toFixed(1)
        : v >= 1
          ? v.toFixed(2)
          : v.toFixed(3);
  return unit === '' ? s : `${s} ${unit}`;
}

export function LineChart(props: {
  id: string;
  title: string;
  series: readonly Series[];
  unit?: string;
  height?: number;
  from: number;
  to: number;
}) {
  const H = props.height ?? 170;
  const [at, setAt] = useState<number | null>(null);
  const svg = useRef<SVGSVGElement>(null);
  const all = props.series.flatMap((s) => s.points);
  const max = niceMax(Math.max(0, ...all.map((p) => p.v)));
  const span = Math.max(1, props.to - props.from);
  const x = (t: number): number => PAD.l + ((t - props.from) / span) * (W - PAD.l - PAD.r);
  const y = (v: number): number => PAD.t + (1 - v / max) * (H - PAD.t - PAD.b);
  const ticks: number[] = [];
  const tickEvery =
    [15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000].find((s) => span / s <= 7) ??
    1_800_000;
  for (let t = Math.ceil(props.from / tickEvery) * tickEvery; t <= props.to; t += tickEvery)
    ticks.push(t);
  const clock = (t: number): string =>
    new Date(t).toLocaleTimeString(
      undefined,
      tickEvery < 60_000
        ? { hour: '2-digit', minute: '2-digit', second: '2-digit' }
        : { hour: '2-digit', minute: '2-digit' },
    );
  const nearest = (s: Series): { t: number; v: number } | undefined =>
    at === null
      ? undefined
      : s.points.reduce<{ t: number; v: number } | undefined>(
          (best, p) =>
            best === undefined || Math.abs(p.t - at) < Math.abs(best.t - at) ? p : best,
          undefined,
        );
  const move = (e: PointerEvent): void => {
    const r = svg.current?.getBoundingClientRect();
    if (!r) return;
    const px = ((e.clientX - r.left) / r.width) * W;
    setAt(props.from + ((px - PAD.l) / (W - PAD.l - PAD.r)) * span);
  };
  const last = props.series.map((s) => ({ s, p: s.points[s.points.length - 1] }));
  return (
    <figure class="chart" id={props.id}>
      <figcaption>{props.title}</figcaption>
      <svg
        ref={svg}
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`${props.title}: ${last.map(({ s, p }) => `${s.name} ${p === undefined ? 'no data' : fmtValue(p.v, props.unit)}`).join(', ')}`}
        onPointerMove={move}
        onPointerLeave={() => setAt(null)}
      >
        {[0, 0.25, 0.5, 0.75, 1].map((f) => (
          <g key={f} class="grid">
            <line x1={PAD.l} x2={W - PAD.r} y1={y(max * f)} y2={y(max * f)} />
            <text x={PAD.l - 4} y={y(max * f) + 4} text-anchor="end">
              {fmtTick(max * f)}
            </text>
          </g>
        ))}
        {ticks.map((t) => (
          <text key={t} class="axis" x={x(t)} y={H - 6} text-anchor="middle">
            {clock(t)}
          </text>
        ))}
        {props.series.map((s) => (
          <path
            key={s.name}
            class="line"
            stroke={s.color}
            d={s.points
              .map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`)
              .join('')}
          />
        ))}
        {props.series.map(
          (s) =>
            s.points.length === 1 && (
              <circle
                key={`${s.name}-dot`}
                cx={x((s.points[0] as { t: number }).t)}
                cy={y((s.points[0] as { v: number }).v)}
                r={3}
                fill={s.color}
              />
            ),
        )}
        {at !== null && at >= props.from && at <= props.to && (
          <line class="cursor" x1={x(at)} x2={x(at)} y1={PAD.t} y2={H - PAD.b} />
        )}
      </svg>
      <ul class="legend-line">
        {props.series.map((s) => {
          const p = nearest(s) ?? s.points[s.points.length - 1];
          return (
            <li key={s.name}>
              <span class="dot" style={{ background: s.color }} /> {s.name}{' '}
              <b>{p === undefined ? '–' : fmtValue(p.v, props.unit)}</b>
            </li>
          );
        })}
        {at !== null && <li class="sub">at {clock(at)}</li>}
      </ul>
    </figure>
  );
}

export interface Bucket {
  startUs: number;
  count: number;
}

/** The timeline: one bar per bucket (from {@link barsOf}). */
export function BarChart(props: {
  id: string;
  title: string;
  buckets: readonly Bucket[];
  bucketUs: number;
  selected: { since: number; until: number } | null;
  onPick: (b: Bucket) => void;
  describe: (b: Bucket) => string;
}) {
  const H = 120;
  const full = props.buckets;
  const nonEmpty = full.map((b, i) => (b.count > 0 ? i : -1)).filter((i) => i >= 0);
  const [focus, setFocus] = useState<number | null>(null);
  const group = useRef<SVGGElement>(null);
  if (full.length === 0) return null;
  const max = niceMax(Math.max(...full.map((b) => b.count)));
  const bw = (W - PAD.l - PAD.r) / full.length;
  const y = (v: number): number => PAD.t + (1 - v / max) * (H - PAD.t - PAD.b);
  const current = focus ?? nonEmpty[nonEmpty.length - 1] ?? 0;
  const step = (dir: number): void => {
    const at = nonEmpty.indexOf(current);
    const next = nonEmpty[Math.min(nonEmpty.length - 1, Math.max(0, at + dir))];
    if (next === undefined) return;
    setFocus(next);
    (group.current?.querySelector(`[data-bucket="${next}"]`) as SVGElement | null)?.focus();
  };
  const labels = labelEvery(full);
  const manyDays = full.length * props.bucketUs > 86_400_000_000;
  return (
    <figure class="chart timeline" id={props.id}>
      <figcaption>{props.title}</figcaption>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="group"
        aria-label={`${props.title}. Arrow keys move between bars, Enter filters the list to one.`}
      >
        {[0, 0.5, 1].map((f) => (
          <g key={f} class="grid">
            <line x1={PAD.l} x2={W - PAD.r} y1={y(max * f)} y2={y(max * f)} />
            <text x={PAD.l - 4} y={y(max * f) + 4} text-anchor="end">
              {fmtValue(max * f)}
            </text>
          </g>
        ))}
        {labels.map((i) => (
          <text key={i} class="axis" x={PAD.l + (i + 0.5) * bw} y={H - 6} text-anchor="middle">
            {bucketLabel((full[i] as Bucket).startUs, props.bucketUs, true, manyDays)}
          </text>
        ))}
        <g ref={group}>
          {full.map((b, i) => {
            const sel =
              props.selected !== null &&
              b.startUs >= props.selected.since &&
              b.startUs < props.selected.until;
            const h = b.count === 0 ? 0 : Math.max(2, H - PAD.b - y(b.count));
            return (
              <rect
                key={b.startUs}
                class={`bar${sel ? ' selected' : ''}${b.count === 0 ? ' empty' : ''}`}
                data-bucket={i}
                data-start-us={b.startUs}
                x={PAD.l + i * bw + Math.min(1, bw * 0.1)}
                width={Math.max(1, bw - Math.min(2, bw * 0.2))}
                y={H - PAD.b - h}
                height={h}
                tabIndex={b.count > 0 && i === current ? 0 : -1}
                role={b.count > 0 ? 'button' : undefined}
                aria-pressed={b.count > 0 ? sel : undefined}
                aria-label={b.count > 0 ? props.describe(b) : undefined}
                onClick={() => b.count > 0 && props.onPick(b)}
                onFocus={() => setFocus(i)}
                onKeyDown={(e) => {
                  if (
                    e.key === 'ArrowRight' ||
                    e.key === 'ArrowLeft' ||
                    e.key === 'Home' ||
                    e.key === 'End'
                  ) {
                    e.preventDefault();
                    step(
                      e.key === 'ArrowRight'
                        ? 1
                        : e.key === 'ArrowLeft'
                          ? -1
                          : e.key === 'Home'
                            ? -Infinity
                            : Infinity,
                    );
                  } else if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault();
                    props.onPick(b);
                  }
                }}
              >
                <title>{props.describe(b)}</title>
              </rect>
            );
          })}
        </g>
      </svg>
    </figure>
  );
}

/**
 * Bars for the buckets from the first to the last, zeros included; when that is more than
 * `maxBars`, neighbouring buckets are summed into wider bars (2, 3 … buckets each).
 */
export function barsOf(
  buckets: readonly Bucket[],
  bucketUs: number,
  maxBars = 400,
): { bars: Bucket[]; bucketUs: number } {
  const first = buckets[0];
  const last = buckets[buckets.length - 1];
  if (!first || !last) return { bars: [], bucketUs };
  const n = Math.round((last.startUs - first.startUs) / bucketUs) + 1;
  const group = Math.ceil(n / maxBars);
  const width = group * bucketUs;
  const bars: Bucket[] = Array.from({ length: Math.ceil(n / group) }, (_, i) => ({
    startUs: first.startUs + i * width,
    count: 0,
  }));
  for (const b of buckets) {
    const bar = bars[Math.floor((b.startUs - first.startUs) / width)];
    if (bar) bar.count += b.count;
  }
  return { bars, bucketUs: width };
}

function labelEvery(full: readonly Bucket[]): number[] {
  const n = full.length;
  const every = Math.max(1, Math.ceil(n / 6));
  const out: number[] = [];
  for (let i = 0; i < n; i += every) out.push(i);
  return out;
}

/** A bucket's start as a label: the hour (with the day when the chart spans several), or the day. */
export function bucketLabel(
  startUs: number,
  bucketUs: number,
  short = false,
  withDay = true,
): string {
  const d = new Date(startUs / 1000);
  if (bucketUs < 86_400_000_000) {
    const hour = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
    if (short)
      return withDay
        ? `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${hour}`
        : hour;
    return `${d.toLocaleDateString(undefined, { dateStyle: 'medium' })} ${hour}`;
  }
  return d.toLocaleDateString(
    undefined,
    short ? { month: 'short', day: 'numeric' } : { dateStyle: 'medium' },
  );
}
