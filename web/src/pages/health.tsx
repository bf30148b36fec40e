/**
 * @module pages/health — memory count, request rates and latencies, embedding and background
 * backlogs, subscriptions, from /v1/metrics, sampled every few seconds (rates compare the last
 * two samples).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { num } from '../format.ts';
import { parseMetrics, requestStats, total, type Sample } from '../metrics.ts';
import { describeError, type Session } from '../session.ts';
import { ErrorBanner } from '../ui.tsx';

const EVERY_MS = 3000;

interface View {
  at: Date;
  samples: Sample[];
  previous: { at: Date; samples: Sample[] } | null;
  ready: string;
}

export function HealthPage({ session }: { session: Session }) {
  const [view, setView] = useState<View | null>(null);
  const [error, setError] = useState<string | null>(null);
  const last = useRef<{ at: Date; samples: Sample[] } | null>(null);
  useEffect(() => {
    let live = true;
    const tick = async (): Promise<void> => {
      try {
        const [text, ready] = await Promise.all([session.root.metrics(), session.root.healthReady().then((r) => r.status, (err: unknown) => describeError(err))]);
        if (!live) return;
        const now = { at: new Date(), samples: parseMetrics(text) };
        setView({ ...now, previous: last.current, ready });
        last.current = now;
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
  if (view === null) return <><h1>Health</h1><ErrorBanner error={error} /><p role="status">Loading metrics…</p></>;
  const s = view.samples;
  const seconds = view.previous ? (view.at.getTime() - view.previous.at.getTime()) / 1000 : 1;
  const ops = requestStats(view.previous?.samples ?? null, s, seconds);
  const embedCount = total(s, 'flashbulb_embedding_duration_seconds_count');
  const embedMean = embedCount > 0 ? (total(s, 'flashbulb_embedding_duration_seconds_sum') / embedCount) * 1000 : null;
  const backlog = (work: string): number => total(s, 'flashbulb_background_backlog', (l) => l['work'] === work);
  return (
    <>
      <h1>Health <span class="sub">refreshed every {EVERY_MS / 1000} s · {view.at.toLocaleTimeString()}</span></h1>
      <ErrorBanner error={error} />
      <div class="tiles" id="health-tiles">
        <Tile label="Status" value={view.ready} />
        <Tile label="Memories (all workspaces)" value={String(total(s, 'flashbulb_memories'))} />
        <Tile label="Requests / s" value={num(ops.reduce((a, o) => a + o.rate, 0), 1)} />
        <Tile label="Embedding batches" value={`${embedCount}${embedMean === null ? '' : ` · mean ${num(embedMean, 1)} ms`}`} />
        <Tile label="Contradiction checks waiting" value={String(backlog('contradiction_checks'))} />
        <Tile label="Vectors waiting for the index" value={String(backlog('vector_index'))} />
        <Tile label="Open subscriptions" value={String(total(s, 'flashbulb_open_subscriptions'))} />
        <Tile label="Pushes · dropped" value={`${total(s, 'flashbulb_subscription_pushes_total')} · ${total(s, 'flashbulb_subscription_dropped_total')}`} />
        <Tile label="Rate limited" value={String(total(s, 'flashbulb_rate_limited_total'))} />
        <Tile label="Contradictions found" value={String(total(s, 'flashbulb_contradictions_found_total'))} />
      </div>
      <h2>Requests by operation</h2>
      <table id="ops-table">
        <thead><tr><th>Operation</th><th>Rate (/s)</th><th>Mean (ms)</th><th>p95 ≤ (ms)</th><th>Total</th></tr></thead>
        <tbody>
          {ops.map((o) => (
            <tr key={o.op}><td>{o.op}</td><td>{num(o.rate, 2)}</td><td>{o.meanMs === null ? '–' : num(o.meanMs, 2)}{o.sinceStart && o.meanMs !== null ? ' *' : ''}</td><td>{o.p95Ms === null ? '–' : num(o.p95Ms, 1)}</td><td>{o.count}</td></tr>
          ))}
        </tbody>
      </table>
      <p class="sub">Rates and latencies cover the last {EVERY_MS / 1000} s; * marks latencies since the server started, for operations idle in that interval. p95 is the upper bound of the histogram bucket holding the 95th percentile.</p>
    </>
  );
}

function Tile({ label, value }: { label: string; value: string }) {
  return <div class="tile"><div class="tile-value">{value}</div><div class="tile-label">{label}</div></div>;
}
