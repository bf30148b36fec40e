/**
 * @module pages/memory — one memory: content, context, importance and counters; its versions
 * (superseded states, reached by `revised_from` edges); edges in and out; revise and forget.
 */
import { useState } from 'preact/hooks';
import type { Edge, Memory } from '../../../clients/typescript/src/index.ts';
import { num, shortId, when } from '../format.ts';
import { href, hrefQuery, navigate } from '../router.ts';
import { describeError, type Session } from '../session.ts';
import { ApiPanel } from '../api-panel.tsx';
import { Confirm, ErrorBanner, KindBadge, useAsync } from '../ui.tsx';

interface Loaded {
  memory: Memory;
  outgoing: Edge[];
  incoming: Edge[];
  versions: Memory[];
  /** Content of the memories at the other end of the edges, by id. */
  others: Map<string, Memory>;
}

async function load(session: Session, id: string): Promise<Loaded> {
  const [memory, edges] = await Promise.all([session.client.get(id), session.client.edges(id)]);
  const ids = new Set([
    ...edges.outgoing.map((e) => e.target_id),
    ...edges.incoming.map((e) => e.source_id),
  ]);
  const others = new Map<string, Memory>();
  if (ids.size > 0)
    for (const m of await session.client.batchGet({ memory_ids: [...ids] }))
      others.set(m.memory_id, m);
  const versions = edges.outgoing
    .filter((e) => e.edge_type === 'revised_from')
    .map((e) => others.get(e.target_id))
    .filter((m): m is Memory => m !== undefined && m.superseded_by === memory.memory_id)
    .sort((a, b) => b.updated_at - a.updated_at);
  return { memory, outgoing: edges.outgoing, incoming: edges.incoming, versions, others };
}

export function MemoryPage({ session, id }: { session: Session; id: string }) {
  const data = useAsync(() => load(session, id), [session, id]);
  if (data.error !== null && !data.data)
    return (
      <>
        <h1>Memory {shortId(id)}</h1>
        <ErrorBanner error={data.error} />
        <a href={href('memories')}>Back to memories</a>
      </>
    );
  if (!data.data) return <p role="status">Loading…</p>;
  const { memory, versions, outgoing, incoming, others } = data.data;
  return (
    <>
      <p>
        <a href={href('memories')}>← Memories</a>
      </p>
      <h1>
        Memory <code>{shortId(memory.memory_id)}</code> <KindBadge kind={memory.kind} />
      </h1>
      <ErrorBanner error={data.error} />
      <section class="panel" aria-label="Content">
        <p class="big" id="memory-content">
          {memory.content}
        </p>
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{memory.memory_id}</code>
          </dd>
          <dt>Entity</dt>
          <dd>
            {memory.entity_id === null ? (
              '—'
            ) : (
              <a href={href('entities', memory.entity_id)}>{memory.entity_id}</a>
            )}
          </dd>
          {memory.speaker !== null && (
            <>
              <dt>Speaker</dt>
              <dd>
                <a href={hrefQuery(['memories'], { speaker: memory.speaker })}>{memory.speaker}</a>
              </dd>
            </>
          )}
          {memory.conversation_id !== null && (
            <>
              <dt>Conversation</dt>
              <dd>
                <a
                  href={hrefQuery(['memories'], {
                    conversation: memory.conversation_id,
                    sort: 'oldest',
                  })}
                >
                  {memory.conversation_id}
                </a>
                {memory.message_id !== null && <> · message {memory.message_id}</>}
              </dd>
            </>
          )}
          <dt>Importance</dt>
          <dd>{num(memory.importance, 2)}</dd>
          <dt>Decay score</dt>
          <dd>{num(memory.decay_score)}</dd>
          <dt>Accesses</dt>
          <dd>
            {memory.access_count === 0
              ? 'never read'
              : `${memory.access_count} (last ${when(memory.last_accessed_at)})`}
          </dd>
          <dt>Happened</dt>
          <dd>{when(memory.occurred_at)}</dd>
          <dt>Created</dt>
          <dd>{when(memory.created_at)}</dd>
          <dt>Updated</dt>
          <dd>{when(memory.updated_at)}</dd>
          {memory.superseded_by !== undefined && (
            <>
              <dt>Superseded by</dt>
              <dd>
                <a href={href('memories', memory.superseded_by)}>{shortId(memory.superseded_by)}</a>
              </dd>
            </>
          )}
          {memory.source_memory_ids && (
            <>
              <dt>Sources</dt>
              <dd>
                {memory.source_memory_ids.map((s) => (
                  <a key={s} href={href('memories', s)} class="chip">
                    {shortId(s)}
                  </a>
                ))}
              </dd>
            </>
          )}
        </dl>
        <h3>Context</h3>
        <pre class="json">{JSON.stringify(memory.context, null, 2)}</pre>
        <div class="row">
          <a class="button" href={href('graph', memory.memory_id)}>
            Open graph
          </a>
        </div>
      </section>
      {memory.superseded_by === undefined && (
        <Actions session={session} memory={memory} onRevised={data.reload} />
      )}
      <section aria-labelledby="versions-h">
        <h2 id="versions-h">Versions ({versions.length})</h2>
        {versions.length === 0 ? (
          <p>Never revised.</p>
        ) : (
          <ol class="versions">
            {versions.map((v) => (
              <li key={v.memory_id}>
                <a href={href('memories', v.memory_id)}>{when(v.updated_at)}</a> · importance{' '}
                {num(v.importance, 2)}
                <p>{v.content}</p>
              </li>
            ))}
          </ol>
        )}
      </section>
      <section aria-labelledby="edges-h">
        <h2 id="edges-h">Edges</h2>
        <div class="cols">
          <EdgeList
            title={`Outgoing (${outgoing.length})`}
            edges={outgoing}
            otherEnd={(e) => e.target_id}
            others={others}
          />
          <EdgeList
            title={`Incoming (${incoming.length})`}
            edges={incoming}
            otherEnd={(e) => e.source_id}
            others={others}
          />
        </div>
      </section>
      <ApiPanel
        session={session}
        call={{ op: 'get', params: [memory.memory_id] }}
        what="this memory"
      />
    </>
  );
}

function EdgeList({
  title,
  edges,
  otherEnd,
  others,
}: {
  title: string;
  edges: Edge[];
  otherEnd: (e: Edge) => string;
  others: Map<string, Memory>;
}) {
  return (
    <div>
      <h3>{title}</h3>
      {edges.length === 0 ? (
        <p>None.</p>
      ) : (
        <ul class="edges">
          {edges.map((e) => {
            const id = otherEnd(e);
            return (
              <li key={`${e.source_id}-${e.target_id}-${e.edge_type}`}>
                <span class={`badge edge-${e.edge_type}`}>{e.edge_type}</span>{' '}
                <a href={href('memories', id)}>
                  {others.get(id)?.content.slice(0, 120) ?? shortId(id)}
                </a>
                <small> · confidence {num(e.confidence, 2)}</small>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

function Actions({
  session,
  memory,
  onRevised,
}: {
  session: Session;
  memory: Memory;
  onRevised: () => void;
}) {
  const [content, setContent] = useState(memory.content);
  const [importance, setImportance] = useState(String(memory.importance));
  const [context, setContext] = useState(JSON.stringify(memory.context, null, 2));
  const [mode, setMode] = useState<'merge' | 'replace'>('merge');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const revise = async (e: Event): Promise<void> => {
    e.preventDefault();
    let ctx: Record<string, unknown>;
    try {
      ctx = JSON.parse(context) as Record<string, unknown>;
    } catch (err) {
      setMessage({ ok: false, text: `Context is not valid JSON: ${(err as Error).message}` });
      return;
    }
    try {
      await session.client.revise(memory.memory_id, {
        content,
        importance: Number(importance),
        context: ctx,
        context_mode: mode,
      });
      setMessage({ ok: true, text: 'Revised; the previous state is kept as a version.' });
      onRevised();
    } catch (err) {
      setMessage({ ok: false, text: describeError(err) });
    }
  };
  const forget = async (): Promise<void> => {
    setConfirming(false);
    try {
      await session.client.forget({ memory_ids: [memory.memory_id] });
      navigate(href('memories'));
    } catch (err) {
      setMessage({ ok: false, text: describeError(err) });
    }
  };
  return (
    <section class="panel" aria-labelledby="actions-h">
      <h2 id="actions-h">Revise or forget</h2>
      <form onSubmit={revise} class="grid">
        <label for="rev-content">Content</label>
        <textarea
          id="rev-content"
          rows={3}
          required
          value={content}
          onInput={(e) => setContent(e.currentTarget.value)}
        />
        <label for="rev-importance">Importance</label>
        <input
          id="rev-importance"
          type="number"
          min="0"
          max="1"
          step="0.05"
          value={importance}
          onInput={(e) => setImportance(e.currentTarget.value)}
        />
        <label for="rev-context">Context</label>
        <textarea
          id="rev-context"
          rows={4}
          value={context}
          onInput={(e) => setContext(e.currentTarget.value)}
        />
        <label for="rev-mode">Context mode</label>
        <select
          id="rev-mode"
          value={mode}
          onChange={(e) => setMode(e.currentTarget.value as 'merge' | 'replace')}
        >
          <option value="merge">merge</option>
          <option value="replace">replace</option>
        </select>
        <span />
        <div class="row">
          <button type="submit">Revise</button>
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Forget…
          </button>
        </div>
      </form>
      {message && (
        <p class={message.ok ? 'ok' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <Confirm
        open={confirming}
        title="Forget this memory?"
        confirmLabel="Forget"
        onConfirm={forget}
        onCancel={() => setConfirming(false)}
      >
        <p>
          “{memory.content.slice(0, 200)}” and its versions will be erased from memory and from
          disk. This cannot be undone.
        </p>
      </Confirm>
    </section>
  );
}
