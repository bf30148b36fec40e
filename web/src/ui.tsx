/** @module ui — small shared pieces: async loading, error banners, confirmation, memory summaries. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Memory } from '../../clients/typescript/src/index.ts';
import { ago, clip, num, shortId, when } from './format.ts';
import { href, hrefQuery } from './router.ts';
import { describeError } from './session.ts';

export interface Async<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on `reload()`); a stale answer never overwrites a newer one. */
export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[]): Async<T> {
  const [state, setState] = useState<{
    data: T | undefined;
    error: string | null;
    loading: boolean;
  }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (err: unknown) =>
        live && setState((s) => ({ data: s.data, error: describeError(err), loading: false })),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function ErrorBanner({ error }: { error: string | null }) {
  if (error === null) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/** A modal confirmation (native <dialog>: focus is trapped, Escape cancels). */
export function Confirm(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby="confirm-title"
      onCancel={(e) => {
        e.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id="confirm-title">{props.title}</h2>
      <div>{props.children}</div>
      <div class="row end">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export function KindBadge({ kind }: { kind: Memory['kind'] }) {
  return <span class={`badge kind-${kind}`}>{kind}</span>;
}

/** One memory as a row of a list: content linked to its page, kind, entity, importance, accesses, time. */
export function MemorySummary({
  memory,
  children,
}: {
  memory: Memory;
  children?: ComponentChildren;
}) {
  return (
    <article class="memory" data-memory-id={memory.memory_id}>
      <a class="content" href={href('memories', memory.memory_id)}>
        {clip(memory.content, 240)}
      </a>
      <div class="meta">
        <KindBadge kind={memory.kind} />
        {memory.entity_id !== null && (
          <a class="badge" href={href('entities', memory.entity_id)}>
            entity: {memory.entity_id}
          </a>
        )}
        {memory.speaker !== null && (
          <a
            class="badge"
            href={hrefQuery(['memories'], { speaker: memory.speaker })}
            title="only this speaker"
          >
            said by {memory.speaker}
          </a>
        )}
        {memory.conversation_id !== null && (
          <a
            class="badge"
            href={hrefQuery(['memories'], { conversation: memory.conversation_id, sort: 'oldest' })}
            title="this conversation, in order"
          >
            conversation {clip(memory.conversation_id, 24)}
          </a>
        )}
        {memory.superseded_by !== undefined && <span class="badge warn">superseded</span>}
        <span title="importance" class="importance">
          <span class="meter" aria-hidden="true">
            <span style={{ width: `${Math.round(memory.importance * 100)}%` }} />
          </span>
          importance {num(memory.importance, 2)}
        </span>
        <span
          title={
            memory.access_count === 0
              ? 'never read by recall or prime'
              : `last read ${when(memory.last_accessed_at)}`
          }
        >
          {memory.access_count} {memory.access_count === 1 ? 'access' : 'accesses'}
        </span>
        <span title={memory.memory_id}>{shortId(memory.memory_id)}</span>
        <time dateTime={memory.created_at_iso} title={`stored ${when(memory.created_at)}`}>
          {ago(memory.created_at)}
        </time>
        {Math.abs(memory.occurred_at - memory.created_at) > 60_000_000 && (
          <time dateTime={memory.occurred_at_iso} title="when it happened">
            happened {when(memory.occurred_at)}
          </time>
        )}
      </div>
      {children}
    </article>
  );
}
