/**
 * @module pages/memories — the memory list (pages/browse: words, kind, entity, time range, sort,
 * total, timeline), a form to store a memory, and search by meaning through recall with strategy
 * and similarity-mode pickers; the API panel shows the list's call.
 */
import { useState } from 'preact/hooks';
import type {
  RecallBody,
  RecallHit,
  RecallResponse,
} from '../../../clients/typescript/src/index.ts';
import { ApiPanel } from '../api-panel.tsx';
import { num, shortId } from '../format.ts';
import type { Location } from '../router.ts';
import { describeError, type Session } from '../session.ts';
import { ErrorBanner, MemorySummary, Notice } from '../ui.tsx';
import { listCall, MemoryBrowser } from './browse.tsx';

const STRATEGIES = ['similarity', 'temporal', 'causal', 'analogical'] as const;
const MODES = ['hybrid', 'dense', 'lexical'] as const;

export function MemoriesPage({ session, loc }: { session: Session; loc: Location }) {
  const [created, setCreated] = useState(0);
  return (
    <>
      <h1>
        Memories <span class="sub">in {session.workspace}</span>
      </h1>
      <Remember session={session} onCreated={() => setCreated((n) => n + 1)} />
      <MemoryBrowser session={session} loc={loc} refresh={created} />
      <Search session={session} />
      <ApiPanel session={session} call={listCall(loc, null)} what="this list" />
    </>
  );
}

function Remember({ session, onCreated }: { session: Session; onCreated: () => void }) {
  const [content, setContent] = useState('');
  const [entity, setEntity] = useState('');
  const [importance, setImportance] = useState('0.5');
  const [context, setContext] = useState('');
  const [status, setStatus] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    let ctx: Record<string, unknown> | undefined;
    try {
      ctx = context.trim() === '' ? undefined : (JSON.parse(context) as Record<string, unknown>);
    } catch (err) {
      setStatus({ ok: false, text: `Context is not valid JSON: ${(err as Error).message}` });
      return;
    }
    try {
      const m = await session.client.remember({
        content,
        importance: Number(importance),
        ...(entity === '' ? {} : { entity_id: entity }),
        ...(ctx ? { context: ctx } : {}),
      });
      setStatus({ ok: true, text: `Stored memory ${shortId(m.memory_id)}.` });
      setContent('');
      onCreated();
    } catch (err) {
      setStatus({ ok: false, text: describeError(err) });
    }
  };
  return (
    <details class="panel">
      <summary>Store a memory</summary>
      <form onSubmit={submit} class="grid">
        <label for="new-content">Content</label>
        <textarea
          id="new-content"
          required
          rows={3}
          value={content}
          onInput={(e) => setContent(e.currentTarget.value)}
        />
        <label for="new-entity">Entity (optional)</label>
        <input id="new-entity" value={entity} onInput={(e) => setEntity(e.currentTarget.value)} />
        <label for="new-importance">Importance</label>
        <input
          id="new-importance"
          type="number"
          min="0"
          max="1"
          step="0.05"
          value={importance}
          onInput={(e) => setImportance(e.currentTarget.value)}
        />
        <label for="new-context">Context (JSON object, optional)</label>
        <textarea
          id="new-context"
          rows={2}
          value={context}
          onInput={(e) => setContext(e.currentTarget.value)}
          placeholder='{"source": "chat"}'
        />
        <span />
        <div>
          <button type="submit">Remember</button>
        </div>
      </form>
      {status && (
        <p class={status.ok ? 'ok' : 'error'} role={status.ok ? 'status' : 'alert'}>
          {status.text}
        </p>
      )}
    </details>
  );
}

function Search({ session }: { session: Session }) {
  const [cue, setCue] = useState('');
  const [strategies, setStrategies] = useState<Set<string>>(new Set(['similarity']));
  const [mode, setMode] = useState<(typeof MODES)[number]>('hybrid');
  const [topK, setTopK] = useState('10');
  const [entity, setEntity] = useState('');
  const [result, setResult] = useState<RecallResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const toggle = (s: string): void => {
    const next = new Set(strategies);
    if (next.has(s)) next.delete(s);
    else next.add(s);
    setStrategies(next);
  };
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const body: RecallBody = {
      cue,
      strategies: [...strategies],
      similarity_mode: mode,
      top_k: Number(topK),
    };
    if (entity !== '') body.entity_id = entity;
    try {
      setResult(await session.client.recall(body));
    } catch (err) {
      setError(describeError(err));
      setResult(null);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="search-h" class="panel">
      <h2 id="search-h">Search by meaning (recall)</h2>
      <form onSubmit={submit}>
        <div class="row">
          <label class="grow">
            <span class="sr-only">Cue</span>
            <input
              id="search-cue"
              type="search"
              required
              placeholder="What are you looking for?"
              value={cue}
              onInput={(e) => setCue(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy || strategies.size === 0}>
            {busy ? 'Searching…' : 'Search'}
          </button>
        </div>
        <div class="row filters">
          <fieldset>
            <legend>Strategies</legend>
            {STRATEGIES.map((s) => (
              <label key={s} class="check">
                <input type="checkbox" checked={strategies.has(s)} onChange={() => toggle(s)} /> {s}
              </label>
            ))}
          </fieldset>
          <label>
            Similarity mode
            <select
              value={mode}
              onChange={(e) => setMode(e.currentTarget.value as (typeof MODES)[number])}
            >
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
          <label>
            Top k{' '}
            <input
              type="number"
              min="1"
              max="1000"
              value={topK}
              onInput={(e) => setTopK(e.currentTarget.value)}
              class="narrow"
            />
          </label>
          <label>
            Entity{' '}
            <input
              value={entity}
              onInput={(e) => setEntity(e.currentTarget.value)}
              class="narrow"
            />
          </label>
        </div>
      </form>
      <ErrorBanner error={error} />
      {result && <Results result={result} />}
    </section>
  );
}

function Results({ result }: { result: RecallResponse }) {
  return (
    <div id="search-results">
      {result.strategy_errors.map((e) => (
        <p key={e.strategy} class="warn">
          {e.strategy}: {e.message}
        </p>
      ))}
      {result.results.length === 0 ? (
        <Notice>Nothing recalled.</Notice>
      ) : (
        <p role="status">{result.results.length} result(s)</p>
      )}
      {result.results.map((hit) => (
        <MemorySummary key={hit.memory.memory_id} memory={hit.memory}>
          <HitScores hit={hit} />
        </MemorySummary>
      ))}
    </div>
  );
}

function HitScores({ hit }: { hit: RecallHit }) {
  return (
    <div class="scores">
      <span class="score">
        score <b>{num(hit.score)}</b>
      </span>
      <span class="score">
        relevance <b>{num(hit.relevance)}</b>
      </span>
      {hit.strategy_details.map((d, i) => {
        switch (d.strategy) {
          case 'similarity':
            return (
              <span key={i} class="detail">
                similarity: relevance {num(d.relevance)}, cosine {num(d.cosine)}, lexical{' '}
                {num(d.lexical)}, distance {num(d.distance)}
              </span>
            );
          case 'temporal':
            return (
              <span key={i} class="detail">
                temporal: rank {d.rank}
              </span>
            );
          case 'causal':
            return (
              <span key={i} class="detail">
                causal: depth {d.depth} via {d.edge_type} from {shortId(d.seed_id)}
              </span>
            );
          case 'analogical':
            return (
              <span key={i} class="detail">
                analogical: embedding {num(d.embedding_similarity)}, structure{' '}
                {num(d.structural_similarity)}
              </span>
            );
          default:
            return null;
        }
      })}
      {hit.contradicted_by && hit.contradicted_by.length > 0 && (
        <span class="badge warn">
          contradicted by {hit.contradicted_by.map(shortId).join(', ')}
        </span>
      )}
    </div>
  );
}
