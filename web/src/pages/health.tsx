/**
 * @module pages/health — the last hour from the server's metrics history (`/v1/metrics/history`,
 * 10-second points kept by the server, so the charts start full): requests per second and latency
 * percentiles per operation (computed by the server from the requests' own durations), memories,
 * queues and backlogs, shard states; tiles for now; a table of operations. Polled every 5 s.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { MetricsHistoryResponse } from '../../../clients/typescript/src/index.ts';
import { ApiPanel } from '../api-panel.tsx';
import { fmtValue, LineChart, type Series } from '../charts.tsx';
import { num } from '../format.ts';
import { describeError, type Session } from '../session.ts';
import { ErrorBanner } from '../ui.tsx';

const EVERY_MS = 5000;
const HOUR_MS = 3_600_000;
const COLORS = [
  '#1c7ed6',
  '#e8590c',
  '#2b8a3e',
  '#ae3ec9',
  '#f59f00',
  '#0c8599',
  '#c2255c',
  '#5c940d',
];
/** Health checks and the dashboard's own polling, left out of the charts unless asked for. */
const OWN = new Set(['metrics_history', 'health_ready', 'health_live', 'metrics', 'whoami']);

type Point = MetricsHistoryResponse['current'];

const endMs = (p: Point): number => p.start_us / 1000 + p.seconds * 1000;

export function HealthPage({ session }: { session: Session }) {
  const [points, setPoints] = useState<Point[]>([]);
  const [current, setCurrent] = useState<Point | null>(null);
  const [ready, setReady] = useState('…');
  const [error, setError] = useState<string | null>(null);
  const [op, setOp] = useState<string | null>(null);
  const [own, setOwn] = useState(false);
  const last = useRef<number | null>(null);
  useEffect(() => {
    if (session.whoami.role !== 'admin') return undefined;
    let live = true;
    const tick = async (): Promise<void> => {
      try {
        const [h, r] = await Promise.all([
          session.root.metricsHistory(last.current === null ? {} : { since_us: last.current + 1 }),
          session.root.healthReady().then(
            (x) => (x.status === 'ready' ? 'ready' : `not ready: ${x.reason ?? ''}`),
            (err: unknown) => describeError(err),
          ),
        ]);
        if (!live) return;
        const newest = h.points[h.points.length - 1];
        if (newest) last.current = newest.start_us;
        setPoints((old) => [...old, ...h.points].slice(-h.capacity));
        setCurrent(h.current);
        setReady(r);
        setError(null);
      } catch (err) {
        if (live) setError(describeError(err));
      }
    };
    void tick();
    const timer = setInterval(() => void tick(), EVERY_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [session]);
  if (session.whoami.role !== 'admin') {
    return (
      <>
        <h1>Health</h1>
        <p>
          The service's metrics and their history are for admin keys; this is a workspace key for{' '}
          <b>{session.whoami.workspace.slug}</b>.
        </p>
      </>
    );
  }
  if (current === null)
    return (
      <>
        <h1>Health</h1>
        <ErrorBanner error={error} />
        <p role="status">Loading metrics…</p>
      </>
    );
  const all = [...points, current];
  const to = endMs(current);
  const from = Math.max(to - HOUR_MS, Math.min(...all.map((p) => p.start_us / 1000)));
  const totals = new Map<string, number>();
  for (const p of all)
    for (const [name, o] of Object.entries(p.ops))
      totals.set(name, (totals.get(name) ?? 0) + o.count);
  const ops = [...totals]
    .filter(([name]) => own || !OWN.has(name))
    .sort((a, b) => b[1] - a[1])
    .map(([name]) => name);
  const top = ops.slice(0, 6);
  const chosen = op !== null && totals.has(op) ? op : (ops[0] ?? null);
  const series = (
    name: string,
    color: string,
    value: (p: Point) => number | undefined,
  ): Series => ({
    name,
    color,
    points: all.flatMap((p) => {
      const v = value(p);
      return v === undefined ? [] : [{ t: endMs(p), v }];
    }),
  });
  const g =
    (key: string) =>
    (p: Point): number =>
      p.gauges[key] ?? 0;
  const rate = (p: Point): number =>
    Object.entries(p.ops)
      .filter(([name]) => own || !OWN.has(name))
      .reduce((a, [, o]) => a + o.count, 0) / p.seconds;
  const recent = (name: string): Point['ops'][string] | undefined =>
    [...all].reverse().find((p) => p.ops[name])?.ops[name];
  const gauges = current.gauges;
  return (
    <>
      <h1>
        Health{' '}
        <span class="sub">
          the last hour in {points.length > 0 ? '10-second points' : 'the interval so far'} ·
          refreshed every {EVERY_MS / 1000} s · {new Date(to).toLocaleTimeString()}
        </span>
      </h1>
      <ErrorBanner error={error} />
      <div class="tiles" id="health-tiles">
        <Tile label="Status" value={ready} />
        <Tile label="Memories (all workspaces)" value={String(gauges['memories'] ?? 0)} />
        <Tile label="Requests / s" value={num(rate(current), 1)} />
        {chosen !== null && (
          <Tile label={`${chosen} p95`} value={`${fmtValue(recent(chosen)?.p95_ms ?? 0)} ms`} />
        )}
        <Tile label="Embedding queue" value={String(gauges['embedding_queue'] ?? 0)} />
        <Tile
          label="Contradiction checks waiting"
          value={String(gauges['contradiction_checks'] ?? 0)}
        />
        <Tile label="Vectors waiting for the index" value={String(gauges['vector_index'] ?? 0)} />
        <Tile
          label="Shards down"
          value={`${gauges['shards_down'] ?? 0} of ${gauges['shards'] ?? 0}`}
        />
        <Tile label="Open subscriptions" value={String(gauges['open_subscriptions'] ?? 0)} />
        <Tile label="Resident memory" value={`${gauges['rss_mb'] ?? 0} MB`} />
      </div>
      <div class="row filters">
        <label>
          Latency of
          <select
            id="latency-op"
            value={chosen ?? ''}
            onChange={(e) => setOp(e.currentTarget.value)}
          >
            {ops.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={own} onChange={(e) => setOwn(e.currentTarget.checked)} />{' '}
          include health checks and the dashboard's own requests
        </label>
      </div>
      <div class="charts">
        <LineChart
          id="chart-rate"
          title="Requests per second, by operation"
          from={from}
          to={to}
          series={top.map((name, i) =>
            series(
              name,
              COLORS[i % COLORS.length] as string,
              (p) => (p.ops[name]?.count ?? 0) / p.seconds,
            ),
          )}
        />
        {chosen !== null && (
          <LineChart
            id="chart-latency"
            title={`Latency of ${chosen} (computed percentiles)`}
            unit="ms"
            from={from}
            to={to}
            series={[
              series('p50', COLORS[2] as string, (p) => p.ops[chosen]?.p50_ms),
              series('p95', COLORS[1] as string, (p) => p.ops[chosen]?.p95_ms),
              series('p99', COLORS[6] as string, (p) => p.ops[chosen]?.p99_ms),
            ]}
          />
        )}
        <LineChart
          id="chart-memories"
          title="Memories (all workspaces)"
          from={from}
          to={to}
          series={[series('memories', COLORS[0] as string, g('memories'))]}
        />
        <LineChart
          id="chart-queues"
          title="Queues and backlogs"
          from={from}
          to={to}
          series={[
            series('embedding queue', COLORS[3] as string, g('embedding_queue')),
            series('contradiction checks', COLORS[1] as string, g('contradiction_checks')),
            series('vectors to index', COLORS[5] as string, g('vector_index')),
          ]}
        />
        <LineChart
          id="chart-shards"
          title={`Shards (${gauges['shards'] ?? 0})`}
          from={from}
          to={to}
          series={[
            series('down', COLORS[6] as string, g('shards_down')),
            series('storage failed', COLORS[1] as string, g('shards_storage_failed')),
            series('memory full', COLORS[4] as string, g('shards_memory_full')),
          ]}
        />
      </div>
      <h2>Operations</h2>
      <table id="ops-table">
        <thead>
          <tr>
            <th>Operation</th>
            <th>Rate (/s)</th>
            <th>p50 (ms)</th>
            <th>p95 (ms)</th>
            <th>p99 (ms)</th>
            <th>Max (ms)</th>
            <th>Errors</th>
            <th>In the hour</th>
          </tr>
        </thead>
        <tbody>
          {ops.map((name) => {
            const o = recent(name);
            const lastPoint = [...all].reverse().find((p) => p.ops[name]);
            return (
              <tr key={name}>
                <td>{name}</td>
                <td>{num((current.ops[name]?.count ?? 0) / current.seconds, 2)}</td>
                <td>{fmtValue(o?.p50_ms ?? 0)}</td>
                <td>{fmtValue(o?.p95_ms ?? 0)}</td>
                <td>{fmtValue(o?.p99_ms ?? 0)}</td>
                <td>{fmtValue(o?.max_ms ?? 0)}</td>
                <td>{o?.errors ?? 0}</td>
                <td
                  title={
                    lastPoint
                      ? `percentiles of the interval ending ${new Date(endMs(lastPoint)).toLocaleTimeString()}`
                      : ''
                  }
                >
                  {totals.get(name)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p class="sub">
        Percentiles are computed by the server from each successful request's own duration (every
        one of an operation in a 10-second interval, or a uniform sample of 1,000 in a busier one;
        errors are counted apart); the table shows each operation's latest interval. The history
        lives in the server's memory: it covers the hour since it started at most.
      </p>
      <ApiPanel session={session} call={{ op: 'metrics_history', query: {} }} what="these charts" />
    </>
  );
}

function Tile({ label, value }: { label: string; value: string }) {
  return (
    <div class="tile">
      <div class="tile-value">{value}</div>
      <div class="tile-label">{label}</div>
    </div>
  );
}
