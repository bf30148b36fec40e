/**
 * @module pages/insights — insights with the memories they were drawn from; contradicting pairs
 * side by side (confirmed `contradicts` edges, and candidates still waiting for a verdict), each
 * with the rule that raised it and the words the two texts do not share marked.
 */
import { useState } from 'preact/hooks';
import type { Memory } from '../../../clients/typescript/src/index.ts';
import { ApiPanel } from '../api-panel.tsx';
import { diffWords, type Part } from '../diff.ts';
import { ago, num, when } from '../format.ts';
import { href } from '../router.ts';
import { describeError, type Session } from '../session.ts';
import { ErrorBanner, KindBadge, MemorySummary, Notice, useAsync } from '../ui.tsx';

export function InsightsPage({ session }: { session: Session }) {
  return (
    <>
      <h1>
        Insights and contradictions <span class="sub">in {session.workspace}</span>
      </h1>
      <Insights session={session} />
      <Contradictions session={session} />
      <ApiPanel
        session={session}
        call={{ op: 'contradictions', query: { limit: 100 } }}
        what="the contradictions"
      />
    </>
  );
}

function Insights({ session }: { session: Session }) {
  const [minConfidence, setMinConfidence] = useState('0');
  const [reflecting, setReflecting] = useState<string | null>(null);
  const data = useAsync(async () => {
    const insights = await session.client.insights({
      min_confidence: Number(minConfidence),
      max_results: 50,
    });
    const ids = [...new Set(insights.flatMap((m) => m.source_memory_ids ?? []))].slice(0, 1000);
    const sources = new Map<string, Memory>();
    if (ids.length > 0)
      for (const m of await session.client.batchGet({ memory_ids: ids }))
        sources.set(m.memory_id, m);
    return { insights, sources };
  }, [session, minConfidence]);
  const reflect = async (): Promise<void> => {
    setReflecting('Reflecting…');
    try {
      const r = await session.client.reflect({});
      setReflecting(
        `Reflection: ${r.insights_created} created, ${r.insights_refreshed} refreshed from ${r.memories_processed} memories in ${r.clusters_found} clusters.`,
      );
      data.reload();
    } catch (err) {
      setReflecting(describeError(err));
    }
  };
  return (
    <section aria-labelledby="insights-h">
      <h2 id="insights-h">Insights</h2>
      <div class="row filters">
        <label>
          Min confidence{' '}
          <input
            type="number"
            min="0"
            max="1"
            step="0.05"
            class="narrow"
            value={minConfidence}
            onInput={(e) => setMinConfidence(e.currentTarget.value)}
          />
        </label>
        <button type="button" onClick={reflect}>
          Reflect now
        </button>
        {reflecting !== null && <span role="status">{reflecting}</span>}
      </div>
      <ErrorBanner error={data.error} />
      {data.data?.insights.length === 0 && (
        <Notice>
          No insights yet. Reflection distils them from clusters of at least three related episodes.
        </Notice>
      )}
      {data.data?.insights.map((m) => (
        <MemorySummary key={m.memory_id} memory={m}>
          <details>
            <summary>
              {m.source_memory_ids?.length ?? 0} sources
              {typeof m.context['confidence'] === 'number'
                ? ` · confidence ${num(m.context['confidence'], 2)}`
                : ''}
            </summary>
            <ul>
              {(m.source_memory_ids ?? []).map((id) => (
                <li key={id}>
                  <a href={`#/memories/${id}`}>{data.data?.sources.get(id)?.content ?? id}</a>
                </li>
              ))}
            </ul>
          </details>
        </MemorySummary>
      ))}
    </section>
  );
}

type Contradictions = Awaited<ReturnType<Session['client']['contradictions']>>;

function Contradictions({ session }: { session: Session }) {
  const data = useAsync(() => session.client.contradictions({ limit: 100 }), [session]);
  return (
    <section aria-labelledby="contra-h">
      <h2 id="contra-h">Contradictions</h2>
      <div class="row">
        <button type="button" onClick={data.reload} disabled={data.loading}>
          Rescan
        </button>
      </div>
      <ErrorBanner error={data.error} />
      {data.data && (
        <ContradictionList data={data.data} session={session} onDecided={data.reload} />
      )}
    </section>
  );
}

/** Both texts with the words they do not share marked. */
function Marked({ text, parts }: { text: string; parts: Part[] }) {
  return (
    <span aria-label={text}>
      {parts.map((p, i) => (p.marked ? <mark key={i}>{p.text}</mark> : p.text))}
    </span>
  );
}

function Side({ memory, parts }: { memory: Memory; parts: Part[] }) {
  return (
    <article class="memory" data-memory-id={memory.memory_id}>
      <a class="content" href={href('memories', memory.memory_id)}>
        <Marked text={memory.content} parts={parts} />
      </a>
      <div class="meta">
        <KindBadge kind={memory.kind} />
        {memory.entity_id !== null && (
          <a class="badge" href={href('entities', memory.entity_id)}>
            entity: {memory.entity_id}
          </a>
        )}
        <time title={when(memory.created_at)}>{ago(memory.created_at)}</time>
      </div>
    </article>
  );
}

/** Confirmed pairs and candidates waiting for a verdict, each with the rule that raised it and the differing words marked. */
export function ContradictionList({
  data,
  session,
  onDecided,
}: {
  data: Contradictions;
  session: Session;
  onDecided: () => void;
}) {
  const [message, setMessage] = useState<string | null>(null);
  const decide = async (
    pendingId: string,
    verdict: 'contradiction' | 'revision' | 'dismiss',
  ): Promise<void> => {
    try {
      await session.client.contradictionCommit({
        verdicts: [{ pending_id: pendingId, verdict, confidence: 1 }],
      });
      setMessage(`Recorded: ${verdict}.`);
      onDecided();
    } catch (err) {
      setMessage(describeError(err));
    }
  };
  return (
    <>
      {message !== null && <p role="status">{message}</p>}
      <h3 id="confirmed-h">
        Confirmed ({data.confirmed.length}
        {data.truncated ? '+' : ''})
      </h3>
      {data.confirmed.length === 0 && <Notice>No confirmed contradictions.</Notice>}
      {data.confirmed.map((c) => {
        const d = diffWords(c.a.content, c.b.content);
        return (
          <div class="pair" key={`${c.a.memory_id}${c.b.memory_id}`}>
            <Side memory={c.a} parts={d.a} />
            <span class="versus" aria-label={`contradicts, confidence ${num(c.confidence, 2)}`}>
              ≠<small>{num(c.confidence, 2)}</small>
            </span>
            <Side memory={c.b} parts={d.b} />
            <p class="reason">
              {c.reason === null ? (
                'Marked as contradicting by a caller (no rule recorded).'
              ) : (
                <>Rule: {c.reason}</>
              )}
            </p>
          </div>
        );
      })}
      <h3 id="pending-h">Waiting for a verdict ({data.pending.length})</h3>
      {data.pending.length === 0 && <Notice>No uncertain pairs.</Notice>}
      {data.pending.map((c) => {
        const d = diffWords(c.a.content, c.b.content);
        return (
          <div class="pair pending" key={c.pending_id} data-pending-id={c.pending_id}>
            <Side memory={c.a} parts={d.a} />
            <span
              class="versus"
              aria-label={`maybe a ${c.proposed}, score ${num(c.classifier_score, 2)}`}
            >
              ?
              <small>
                {num(c.classifier_score, 2)} {c.proposed}
              </small>
            </span>
            <Side memory={c.b} parts={d.b} />
            <p class="reason">
              Why: {c.reason ?? 'the classifier was unsure (no rule recorded)'} · similarity{' '}
              {num(c.similarity, 2)} · {c.classifier_method}
            </p>
            <div class="row">
              <button type="button" onClick={() => decide(c.pending_id, 'contradiction')}>
                Contradiction
              </button>
              <button type="button" onClick={() => decide(c.pending_id, 'revision')}>
                Revision
              </button>
              <button type="button" onClick={() => decide(c.pending_id, 'dismiss')}>
                Dismiss
              </button>
            </div>
          </div>
        );
      })}
    </>
  );
}
