/**
 * @module pages/live — opens a subscription, feeds it text, and lists pushes as they arrive with
 * their score, confidence and the chunk of fed text that matched (from `chunk_offset`, a
 * character offset into everything fed so far).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Subscription, SubscribeMessageEvent } from '../../../clients/typescript/src/index.ts';
import { num, when } from '../format.ts';
import { describeError, type Session } from '../session.ts';
import { ErrorBanner, MemorySummary, Notice } from '../ui.tsx';

type State = 'closed' | 'opening' | 'open';

/** The chunk that starts at `offset`: up to its sentence end, as the server's chunker cuts. */
export function chunkAt(transcript: string, offset: number | null): string {
  if (offset === null) return '(a memory written while the subscription was open)';
  const rest = transcript.slice(offset);
  const end = rest.search(/[.!?](\s|$)/);
  return (end < 0 ? rest : rest.slice(0, end + 1)).slice(0, 400).trim();
}

export function LivePage({ session }: { session: Session }) {
  const [threshold, setThreshold] = useState('0.5');
  const [entity, setEntity] = useState('');
  const [state, setState] = useState<State>('closed');
  const [text, setText] = useState('');
  const [transcript, setTranscript] = useState('');
  const [pushes, setPushes] = useState<SubscribeMessageEvent[]>([]);
  const [error, setError] = useState<string | null>(null);
  const sub = useRef<Subscription | null>(null);
  useEffect(() => () => void sub.current?.close().catch(() => {}), []);

  const open = async (): Promise<void> => {
    setState('opening');
    setError(null);
    setPushes([]);
    setTranscript('');
    try {
      const s = await session.client.subscribe({
        confidence_threshold: Number(threshold),
        ...(entity === '' ? {} : { entity_id: entity }),
      });
      sub.current = s;
      setState('open');
      void (async () => {
        try {
          for await (const p of s) setPushes((list) => [p, ...list]);
          if (s.closedReason === 'shutdown')
            setError('The server shut down; the subscription ended.');
        } catch (err) {
          setError(describeError(err));
        } finally {
          if (sub.current === s) {
            sub.current = null;
            setState('closed');
          }
        }
      })();
    } catch (err) {
      setError(describeError(err));
      setState('closed');
    }
  };
  const close = async (): Promise<void> => {
    const s = sub.current;
    if (!s) return;
    try {
      await s.close();
    } catch (err) {
      setError(describeError(err));
    }
  };
  const feed = async (e: Event): Promise<void> => {
    e.preventDefault();
    const s = sub.current;
    if (!s || text.trim() === '') return;
    // Fed text is one stream: end each piece with a space so pieces do not run together.
    const piece = /\s$/.test(text) ? text : `${text} `;
    try {
      setTranscript((t) => t + piece);
      await s.feed(piece);
      setText('');
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <>
      <h1>
        Live <span class="sub">subscription in {session.workspace}</span>
      </h1>
      <div class="row filters">
        <label>
          Confidence threshold{' '}
          <input
            type="number"
            min="0"
            max="1"
            step="0.05"
            class="narrow"
            value={threshold}
            onInput={(e) => setThreshold(e.currentTarget.value)}
            disabled={state !== 'closed'}
          />
        </label>
        <label>
          Entity{' '}
          <input
            class="narrow"
            value={entity}
            onInput={(e) => setEntity(e.currentTarget.value)}
            disabled={state !== 'closed'}
          />
        </label>
        {state === 'open' ? (
          <button type="button" onClick={close}>
            Close subscription
          </button>
        ) : (
          <button type="button" onClick={open} disabled={state === 'opening'}>
            {state === 'opening' ? 'Opening…' : 'Open subscription'}
          </button>
        )}
        <span role="status" id="live-state" class={`badge state-${state}`}>
          {state === 'open' ? `open (#${sub.current?.id ?? ''})` : state}
        </span>
      </div>
      <ErrorBanner error={error} />
      <form onSubmit={feed} class="panel">
        <label for="feed-text">Conversation text</label>
        <textarea
          id="feed-text"
          rows={3}
          value={text}
          disabled={state !== 'open'}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void feed(e);
          }}
          placeholder="Type or paste what the agent is hearing; chunks end at sentence ends (Ctrl+Enter feeds)"
        />
        <div class="row">
          <button type="submit" disabled={state !== 'open'}>
            Feed
          </button>
        </div>
      </form>
      <section aria-labelledby="pushes-h" aria-live="polite">
        <h2 id="pushes-h">Pushes ({pushes.length})</h2>
        {pushes.length === 0 && (
          <Notice>
            {state === 'open'
              ? 'Waiting for text that matches a memory…'
              : 'Open a subscription to see pushes.'}
          </Notice>
        )}
        <div id="pushes">
          {pushes.map((p) => (
            <MemorySummary key={p.sequence_number} memory={p.memory}>
              <div class="scores">
                <span class="score">#{p.sequence_number}</span>
                <span class="score">
                  score <b>{num(p.score)}</b>
                </span>
                <span class="score">
                  confidence <b>{num(p.confidence)}</b>
                </span>
                <span class="detail">chunk: “{chunkAt(transcript, p.chunk_offset)}”</span>
                <time>{when(p.push_timestamp_us)}</time>
              </div>
            </MemorySummary>
          ))}
        </div>
      </section>
    </>
  );
}
