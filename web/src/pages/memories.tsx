/**
 * @module pages/memories — the memory list (paged, filtered by entity, kind, superseded), a form
 * to store a memory, and search through recall with strategy and similarity-mode pickers.
 */
import { useState } from 'preact/hooks';
import type { ListQuery, Memory, RecallBody, RecallHit, RecallResponse } from '../../../clients/typescript/src/index.ts';
import { num, shortId } from '../format.ts';
import { describeError, type Session } from '../session.ts';
import { ErrorBanner, MemorySummary, Notice, useAsync } from '../ui.tsx';

const KINDS: ReadonlyArray<Memory['kind']> = ['episode', 'insight', 'revision', 'document', 'proposition'];
const STRATEGIES = ['similarity', 'temporal', 'causal', 'analogical'] as const;
const MODES = ['hybrid', 'dense', 'lexical'] as const;
const PAGE = 25;

export function MemoriesPage({ session }: { session: Session }) {
  const [created, setCreated] = useState(0);
  return (
    <>
      <h1>Memories <span class="sub">in {session.workspace}</span></h1>
      <Search session={session} />
      <Remember session={session} onCreated={() => setCreated((n) => n + 1)} />
      <Browse session={session} refresh={created} />
    </>
  );
}

function Browse({ session, refresh }: { session: Session; refresh: number }) {
  const [entity, setEntity] = useState('');
  const [kind, setKind] = useState<Memory['kind'] | ''>('');
  const [superseded, setSuperseded] = useState(false);
  // Cursors of the pages seen so far, so "Previous" can go back.
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const query: ListQuery = { limit: PAGE, include_superseded: superseded };
  if (entity !== '') query.entity_id = entity;
  if (kind !== '') query.kind = kind;
  if (cursor !== undefined) query.cursor = cursor;
  const page = useAsync(() => session.client.list(query), [session, entity, kind, superseded, cursor, refresh]);
  const entities = useAsync(() => session.client.entities(), [session, refresh]);
  const resetTo = (f: () => void): void => {
    f();
    setCursors([undefined]);
  };
  return (
    <section aria-labelledby="browse-h">
      <h2 id="browse-h">Browse</h2>
      <div class="row filters">
        <label>Entity
          <select value={entity} onChange={(e) => resetTo(() => setEntity(e.currentTarget.value))}>
            <option value="">any</option>
            {(entities.data ?? []).map((id) => <option key={id} value={id}>{id}</option>)}
          </select>
        </label>
        <label>Kind
          <select value={kind} onChange={(e) => resetTo(() => setKind(e.currentTarget.value as Memory['kind'] | ''))}>
            <option value="">any</option>
            {KINDS.map((k) => <option key={k} value={k}>{k}</option>)}
          </select>
        </label>
        <label class="check"><input type="checkbox" checked={superseded} onChange={(e) => resetTo(() => setSuperseded(e.currentTarget.checked))} /> include superseded</label>
        <button type="button" onClick={page.reload}>Refresh</button>
      </div>
      <ErrorBanner error={page.error} />
      {page.data && page.data.memories.length === 0 && <Notice>No memories match.</Notice>}
      <div class="list" aria-busy={page.loading} id="memory-list">
        {page.data?.memories.map((m) => <MemorySummary key={m.memory_id} memory={m} />)}
      </div>
      <div class="row">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors((c) => c.slice(0, -1))}>← Previous</button>
        <span>page {cursors.length}</span>
        <button type="button" disabled={!page.data?.next_cursor} onClick={() => page.data?.next_cursor && setCursors((c) => [...c, page.data?.next_cursor ?? undefined])}>Next →</button>
      </div>
    </section>
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
      const m = await session.client.remember({ content, importance: Number(importance), ...(entity === '' ? {} : { entity_id: entity }), ...(ctx ? { context: ctx } : {}) });
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
        <textarea id="new-content" required rows={3} value={content} onInput={(e) => setContent(e.currentTarget.value)} />
        <label for="new-entity">Entity (optional)</label>
        <input id="new-entity" value={entity} onInput={(e) => setEntity(e.currentTarget.value)} />
        <label for="new-importance">Importance</label>
        <input id="new-importance" type="number" min="0" max="1" step="0.05" value={importance} onInput={(e) => setImportance(e.currentTarget.value)} />
        <label for="new-context">Context (JSON object, optional)</label>
        <textarea id="new-context" rows={2} value={context} onInput={(e) => setContext(e.currentTarget.value)} placeholder='{"source": "chat"}' />
        <span />
        <div><button type="submit">Remember</button></div>
      </form>
      {status && <p class={status.ok ? 'ok' : 'error'} role={status.ok ? 'status' : 'alert'}>{status.text}</p>}
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
    const body: RecallBody = { cue, strategies: [...strategies], similarity_mode: mode, top_k: Number(topK) };
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
      <h2 id="search-h">Search (recall)</h2>
      <form onSubmit={submit}>
        <div class="row">
          <label class="grow">
            <span class="sr-only">Cue</span>
            <input id="search-cue" type="search" required placeholder="What are you looking for?" value={cue} onInput={(e) => setCue(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={busy || strategies.size === 0}>{busy ? 'Searching…' : 'Search'}</button>
        </div>
        <div class="row filters">
          <fieldset>
            <legend>Strategies</legend>
            {STRATEGIES.map((s) => (
              <label key={s} class="check"><input type="checkbox" checked={strategies.has(s)} onChange={() => toggle(s)} /> {s}</label>
            ))}
          </fieldset>
          <label>Similarity mode
            <select value={mode} onChange={(e) => setMode(e.currentTarget.value as (typeof MODES)[number])}>
              {MODES.map((m) => <option key={m} value={m}>{m}</option>)}
            </select>
          </label>
          <label>Top k <input type="number" min="1" max="1000" value={topK} onInput={(e) => setTopK(e.currentTarget.value)} class="narrow" /></label>
          <label>Entity <input value={entity} onInput={(e) => setEntity(e.currentTarget.value)} class="narrow" /></label>
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
      {result.strategy_errors.map((e) => <p key={e.strategy} class="warn">{e.strategy}: {e.message}</p>)}
      {result.results.length === 0 ? <Notice>Nothing recalled.</Notice> : <p role="status">{result.results.length} result(s)</p>}
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
      <span class="score">score <b>{num(hit.score)}</b></span>
      <span class="score">relevance <b>{num(hit.relevance)}</b></span>
      {hit.strategy_details.map((d, i) => {
        switch (d.strategy) {
          case 'similarity':
            return <span key={i} class="detail">similarity: relevance {num(d.relevance)}, cosine {num(d.cosine)}, lexical {num(d.lexical)}, distance {num(d.distance)}</span>;
          case 'temporal':
            return <span key={i} class="detail">temporal: rank {d.rank}</span>;
          case 'causal':
            return <span key={i} class="detail">causal: depth {d.depth} via {d.edge_type} from {shortId(d.seed_id)}</span>;
          case 'analogical':
            return <span key={i} class="detail">analogical: embedding {num(d.embedding_similarity)}, structure {num(d.structural_similarity)}</span>;
          default:
            return null;
        }
      })}
      {hit.contradicted_by && hit.contradicted_by.length > 0 && <span class="badge warn">contradicted by {hit.contradicted_by.map(shortId).join(', ')}</span>}
    </div>
  );
}
