/**
 * @module pages/insights — insights with the memories they were drawn from; contradicting pairs
 * side by side (confirmed `contradicts` edges, and candidates still waiting for a verdict).
 */
import { useState } from 'preact/hooks';
import type { ContradictionPrepareResponse, Memory } from '../../../clients/typescript/src/index.ts';
import { num } from '../format.ts';
import { describeError, type Session } from '../session.ts';
import { ErrorBanner, MemorySummary, Notice, useAsync } from '../ui.tsx';

/** How many of the newest memories the contradiction scan reads edges for. */
const SCAN = 300;

export function InsightsPage({ session }: { session: Session }) {
  return (
    <>
      <h1>Insights and contradictions <span class="sub">in {session.workspace}</span></h1>
      <Insights session={session} />
      <Contradictions session={session} />
      <Pending session={session} />
    </>
  );
}

function Insights({ session }: { session: Session }) {
  const [minConfidence, setMinConfidence] = useState('0');
  const [reflecting, setReflecting] = useState<string | null>(null);
  const data = useAsync(async () => {
    const insights = await session.client.insights({ min_confidence: Number(minConfidence), max_results: 50 });
    const ids = [...new Set(insights.flatMap((m) => m.source_memory_ids ?? []))].slice(0, 1000);
    const sources = new Map<string, Memory>();
    if (ids.length > 0) for (const m of await session.client.batchGet({ memory_ids: ids })) sources.set(m.memory_id, m);
    return { insights, sources };
  }, [session, minConfidence]);
  const reflect = async (): Promise<void> => {
    setReflecting('Reflecting…');
    try {
      const r = await session.client.reflect({});
      setReflecting(`Reflection: ${r.insights_created} created, ${r.insights_refreshed} refreshed from ${r.memories_processed} memories in ${r.clusters_found} clusters.`);
      data.reload();
    } catch (err) {
      setReflecting(describeError(err));
    }
  };
  return (
    <section aria-labelledby="insights-h">
      <h2 id="insights-h">Insights</h2>
      <div class="row filters">
        <label>Min confidence <input type="number" min="0" max="1" step="0.05" class="narrow" value={minConfidence} onInput={(e) => setMinConfidence(e.currentTarget.value)} /></label>
        <button type="button" onClick={reflect}>Reflect now</button>
        {reflecting !== null && <span role="status">{reflecting}</span>}
      </div>
      <ErrorBanner error={data.error} />
      {data.data?.insights.length === 0 && <Notice>No insights yet. Reflection distils them from clusters of at least three related episodes.</Notice>}
      {data.data?.insights.map((m) => (
        <MemorySummary key={m.memory_id} memory={m}>
          <details>
            <summary>{m.source_memory_ids?.length ?? 0} sources{typeof m.context['confidence'] === 'number' ? ` · confidence ${num(m.context['confidence'], 2)}` : ''}</summary>
            <ul>
              {(m.source_memory_ids ?? []).map((id) => <li key={id}><a href={`#/memories/${id}`}>{data.data?.sources.get(id)?.content ?? id}</a></li>)}
            </ul>
          </details>
        </MemorySummary>
      ))}
    </section>
  );
}

interface Pair {
  a: Memory;
  b: Memory;
  confidence: number;
}

/** Confirmed contradictions: `contradicts` edges among the newest memories (both directions exist; one pair each). */
async function scanContradictions(session: Session): Promise<{ pairs: Pair[]; scanned: number; more: boolean }> {
  const memories: Memory[] = [];
  let cursor: string | null = null;
  do {
    const page = await session.client.list({ limit: 100, ...(cursor === null ? {} : { cursor }) });
    memories.push(...page.memories);
    cursor = page.next_cursor;
  } while (cursor !== null && memories.length < SCAN);
  const scanned = memories.slice(-SCAN);
  const byId = new Map(scanned.map((m) => [m.memory_id, m]));
  const found = new Map<string, { a: string; b: string; confidence: number }>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < scanned.length) {
      const m = scanned[next++] as Memory;
      const edges = await session.client.edges(m.memory_id);
      for (const e of edges.outgoing) {
        if (e.edge_type !== 'contradicts') continue;
        const [a, b] = [e.source_id, e.target_id].sort() as [string, string];
        found.set(`${a}:${b}`, { a, b, confidence: e.confidence });
      }
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  const missing = [...found.values()].flatMap((p) => [p.a, p.b]).filter((id) => !byId.has(id));
  if (missing.length > 0) for (const m of await session.client.batchGet({ memory_ids: [...new Set(missing)].slice(0, 1000) })) byId.set(m.memory_id, m);
  const pairs = [...found.values()].flatMap((p) => {
    const a = byId.get(p.a);
    const b = byId.get(p.b);
    return a && b ? [{ a, b, confidence: p.confidence }] : [];
  });
  return { pairs, scanned: scanned.length, more: cursor !== null };
}

function Contradictions({ session }: { session: Session }) {
  const data = useAsync(() => scanContradictions(session), [session]);
  return (
    <section aria-labelledby="contra-h">
      <h2 id="contra-h">Contradictions</h2>
      <div class="row"><button type="button" onClick={data.reload} disabled={data.loading}>Rescan</button></div>
      <ErrorBanner error={data.error} />
      {data.loading && <p role="status">Scanning edges…</p>}
      {data.data && <p class="sub">{data.data.pairs.length} pair(s) among the {data.data.more ? `newest ${data.data.scanned}` : data.data.scanned} memories.</p>}
      {data.data?.pairs.map((p) => (
        <div class="pair" key={`${p.a.memory_id}${p.b.memory_id}`}>
          <MemorySummary memory={p.a} />
          <span class="versus" aria-label={`contradicts, confidence ${num(p.confidence, 2)}`}>≠<small>{num(p.confidence, 2)}</small></span>
          <MemorySummary memory={p.b} />
        </div>
      ))}
    </section>
  );
}

function Pending({ session }: { session: Session }) {
  const data = useAsync(() => session.client.contradictionPrepare(), [session]);
  const [message, setMessage] = useState<string | null>(null);
  const decide = async (c: ContradictionPrepareResponse[number], verdict: 'contradiction' | 'revision' | 'dismiss'): Promise<void> => {
    try {
      await session.client.contradictionCommit({ verdicts: [{ pending_id: c.pending_id, verdict, confidence: 1 }] });
      setMessage(`Recorded: ${verdict}.`);
      data.reload();
    } catch (err) {
      setMessage(describeError(err));
    }
  };
  return (
    <section aria-labelledby="pending-h">
      <h2 id="pending-h">Candidates waiting for a verdict</h2>
      <ErrorBanner error={data.error} />
      {message !== null && <p role="status">{message}</p>}
      {data.data?.length === 0 && <Notice>No uncertain pairs.</Notice>}
      {data.data?.map((c) => (
        <div class="pair" key={c.pending_id}>
          <article class="memory"><a href={`#/memories/${c.memory_id_a}`}>{c.content_a_snippet}</a></article>
          <span class="versus">?<small>{num(c.classifier_score, 2)} {c.proposed}</small></span>
          <article class="memory"><a href={`#/memories/${c.memory_id_b}`}>{c.content_b_snippet}</a></article>
          <div class="row">
            <button type="button" onClick={() => decide(c, 'contradiction')}>Contradiction</button>
            <button type="button" onClick={() => decide(c, 'revision')}>Revision</button>
            <button type="button" onClick={() => decide(c, 'dismiss')}>Dismiss</button>
          </div>
        </div>
      ))}
    </section>
  );
}
