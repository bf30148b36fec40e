/**
 * @module pages/browse — the memory list with everything in the view's query (so a view can be
 * bookmarked): words, kind, entity, a creation-time range, superseded versions, the sort; a total;
 * cursor pages (a write between pages neither repeats nor skips one); and the timeline above it,
 * a bar per day or hour whose bars filter the list. The memories page and the entity page use it.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ListQuery, Memory, TimelineQuery } from '../../../clients/typescript/src/index.ts';
import type { ApiCall } from '../api-call.ts';
import { BarChart, barsOf, bucketLabel, type Bucket } from '../charts.tsx';
import { dayOf, dayStartUs, plural, when } from '../format.ts';
import { setQuery, type Location } from '../router.ts';
import type { Session } from '../session.ts';
import { ErrorBanner, MemorySummary, Notice, useAsync } from '../ui.tsx';

const KINDS: ReadonlyArray<Memory['kind']> = [
  'episode',
  'insight',
  'revision',
  'document',
  'proposition',
];
const PAGE = 25;
const DAY_US = 86_400_000_000;

/** The sorts offered, by the query value that names them. */
export const SORTS: ReadonlyArray<
  [string, string, NonNullable<ListQuery['sort']>, 'asc' | 'desc']
> = [
  ['newest', 'Newest first', 'created_at', 'desc'],
  ['oldest', 'Oldest first', 'created_at', 'asc'],
  ['important', 'Most important', 'importance', 'desc'],
  ['unimportant', 'Least important', 'importance', 'asc'],
  ['accessed', 'Most accessed', 'access_count', 'desc'],
  ['revised', 'Recently revised', 'updated_at', 'desc'],
  ['read', 'Recently read', 'last_accessed_at', 'desc'],
];

/** The list's criteria as the view's query holds them. */
export function criteria(
  loc: Location,
  fixedEntity: string | null,
): Omit<ListQuery, 'cursor' | 'limit'> {
  const q = loc.query;
  const out: Omit<ListQuery, 'cursor' | 'limit'> = {};
  const text = q.get('q')?.trim() ?? '';
  if (text !== '') out.q = text;
  const kind = q.get('kind');
  if (kind !== null && (KINDS as readonly string[]).includes(kind))
    out.kind = kind as Memory['kind'];
  const entity = fixedEntity ?? q.get('entity') ?? '';
  if (entity !== '') out.entity_id = entity;
  const speaker = q.get('speaker') ?? '';
  if (speaker !== '') out.speaker = speaker;
  const conversation = q.get('conversation') ?? '';
  if (conversation !== '') out.conversation_id = conversation;
  const since = Number(q.get('since') ?? NaN);
  const until = Number(q.get('until') ?? NaN);
  if (Number.isFinite(since)) out.since_us = since;
  if (Number.isFinite(until)) out.until_us = until;
  if (q.get('superseded') === '1') out.include_superseded = true;
  const sort = SORTS.find(([id]) => id === (q.get('sort') ?? 'newest')) ?? SORTS[0];
  if (sort) {
    out.sort = sort[2];
    out.order = sort[3];
  }
  return out;
}

/** The call the list makes, for the page's API panel. */
export function listCall(loc: Location, fixedEntity: string | null): ApiCall {
  return { op: 'list', query: { ...criteria(loc, fixedEntity), limit: PAGE, with_total: true } };
}

export function MemoryBrowser({
  session,
  loc,
  fixedEntity = null,
  refresh = 0,
}: {
  session: Session;
  loc: Location;
  fixedEntity?: string | null;
  refresh?: number;
}) {
  const filters = criteria(loc, fixedEntity);
  const key = JSON.stringify(filters);
  // Cursors of the pages seen so far, for these criteria: other criteria start at the first page.
  const [paging, setPaging] = useState<{ key: string; cursors: Array<string | undefined> }>({
    key,
    cursors: [undefined],
  });
  const cursors = paging.key === key ? paging.cursors : [undefined];
  const setCursors = (f: (c: Array<string | undefined>) => Array<string | undefined>): void =>
    setPaging({ key, cursors: f(cursors) });
  const cursor = cursors[cursors.length - 1];
  const query: ListQuery = {
    ...filters,
    limit: PAGE,
    with_total: true,
    ...(cursor === undefined ? {} : { cursor }),
  };
  const page = useAsync(() => session.client.list(query), [session, key, cursor, refresh]);
  const { since_us: _s, until_us: _u, sort: _o, order: _d, ...span } = filters;
  const spanKey = JSON.stringify(span);
  const timeline = useAsync(() => loadTimeline(session, span), [session, spanKey, refresh]);
  const selected =
    filters.since_us !== undefined || filters.until_us !== undefined
      ? {
          since: Number(filters.since_us ?? 0),
          until: Number(filters.until_us ?? Number.MAX_SAFE_INTEGER),
        }
      : null;
  const pick = (b: Bucket, width: number): void => {
    const same =
      selected !== null && selected.since === b.startUs && selected.until === b.startUs + width;
    setQuery(
      loc,
      same
        ? { since: undefined, until: undefined }
        : { since: String(b.startUs), until: String(b.startUs + width) },
    );
  };
  const from = (page.data?.memories.length ?? 0) === 0 ? 0 : (cursors.length - 1) * PAGE + 1;
  const to = (cursors.length - 1) * PAGE + (page.data?.memories.length ?? 0);
  return (
    <section aria-labelledby="browse-h" class="browse">
      <h2 id="browse-h">Browse</h2>
      <Filters session={session} loc={loc} fixedEntity={fixedEntity} />
      <ErrorBanner error={timeline.error} />
      {timeline.data && timeline.data.bars.length > 0 && (
        <BarChart
          id="timeline"
          title={`Memories per ${timeline.data.unit}${timeline.data.bucketUs > (timeline.data.unit === 'day' ? DAY_US : 3_600_000_000) ? ` (${Math.round(timeline.data.bucketUs / (timeline.data.unit === 'day' ? DAY_US : 3_600_000_000))} ${timeline.data.unit}s a bar)` : ''} · ${plural(timeline.data.total, 'memory', 'memories')}`}
          buckets={timeline.data.bars}
          bucketUs={timeline.data.bucketUs}
          selected={selected}
          onPick={(b) => pick(b, timeline.data?.bucketUs ?? DAY_US)}
          describe={(b) =>
            `${bucketLabel(b.startUs, timeline.data?.bucketUs ?? DAY_US)}: ${plural(b.count, 'memory', 'memories')}`
          }
        />
      )}
      {selected !== null && (
        <p class="row chips">
          <span class="badge">
            created {when(selected.since)} –{' '}
            {selected.until >= Number.MAX_SAFE_INTEGER ? 'now' : when(selected.until)}
          </span>
          <button
            type="button"
            class="ghost"
            onClick={() => setQuery(loc, { since: undefined, until: undefined })}
          >
            Clear the time range
          </button>
        </p>
      )}
      <ErrorBanner error={page.error} />
      <p role="status" id="list-count" class="count">
        {page.data
          ? page.data.total === 0
            ? 'No memories match.'
            : `Showing ${from}–${to} of ${plural(page.data.total ?? to, 'memory', 'memories')}`
          : 'Loading…'}
      </p>
      {page.data && page.data.memories.length === 0 && cursors.length === 1 && (
        <Notice>
          Nothing here yet{Object.keys(filters).length > 2 ? ' with these filters' : ''}.
        </Notice>
      )}
      <div class="list" aria-busy={page.loading} id="memory-list">
        {page.data?.memories.map((m) => (
          <MemorySummary key={m.memory_id} memory={m} />
        ))}
      </div>
      <div class="row">
        <button
          type="button"
          disabled={cursors.length <= 1}
          onClick={() => setCursors((c) => c.slice(0, -1))}
        >
          ← Previous
        </button>
        <span>
          page {cursors.length}
          {page.data?.total ? ` of ${Math.max(1, Math.ceil(page.data.total / PAGE))}` : ''}
        </span>
        <button
          type="button"
          disabled={!page.data?.next_cursor}
          onClick={() =>
            page.data?.next_cursor && setCursors((c) => [...c, page.data?.next_cursor ?? undefined])
          }
        >
          Next →
        </button>
        <button
          type="button"
          class="ghost"
          onClick={() => {
            setCursors(() => [undefined]);
            page.reload();
            timeline.reload();
          }}
        >
          Refresh
        </button>
      </div>
    </section>
  );
}

/** Day buckets; hours when everything falls within three days. */
async function loadTimeline(
  session: Session,
  span: Omit<TimelineQuery, 'bucket'>,
): Promise<{ bars: Bucket[]; bucketUs: number; unit: 'day' | 'hour'; total: number }> {
  const utc_offset_min = -new Date().getTimezoneOffset();
  const days = await session.client.timeline({ ...span, bucket: 'day', utc_offset_min });
  const first = days.buckets[0]?.start_us ?? 0;
  const last = days.buckets[days.buckets.length - 1]?.start_us ?? 0;
  const t =
    last - first <= 2 * DAY_US && days.total > 0
      ? await session.client.timeline({ ...span, bucket: 'hour', utc_offset_min })
      : days;
  const { bars, bucketUs } = barsOf(
    t.buckets.map((b) => ({ startUs: b.start_us, count: b.count })),
    t.bucket_us,
  );
  return { bars, bucketUs, unit: t.bucket, total: t.total };
}

function Filters({
  session,
  loc,
  fixedEntity,
}: {
  session: Session;
  loc: Location;
  fixedEntity: string | null;
}) {
  const q = loc.query;
  const [text, setText] = useState(q.get('q') ?? '');
  const [entity, setEntity] = useState(q.get('entity') ?? '');
  const [speaker, setSpeaker] = useState(q.get('speaker') ?? '');
  const [conversation, setConversation] = useState(q.get('conversation') ?? '');
  useEffect(() => setText(q.get('q') ?? ''), [q.get('q')]);
  useEffect(() => setEntity(q.get('entity') ?? ''), [q.get('entity')]);
  useEffect(() => setSpeaker(q.get('speaker') ?? ''), [q.get('speaker')]);
  useEffect(() => setConversation(q.get('conversation') ?? ''), [q.get('conversation')]);
  // Typing filters after a pause; Enter at once.
  useEffect(() => {
    if (text === (q.get('q') ?? '')) return undefined;
    const timer = setTimeout(() => setQuery(loc, { q: text }), 350);
    return () => clearTimeout(timer);
  }, [text]);
  const entities = useAsync(
    async () =>
      fixedEntity === null
        ? (await session.client.entitySummaries({ sort: 'memories', limit: 1000 })).entities.map(
            (e) => e.entity_id,
          )
        : [],
    [session, fixedEntity],
  );
  const since = Number(q.get('since') ?? NaN);
  const until = Number(q.get('until') ?? NaN);
  const setDay = (which: 'since' | 'until', date: string): void => {
    const start = dayStartUs(date);
    setQuery(loc, {
      [which]: start === null ? undefined : String(which === 'since' ? start : start + DAY_US),
    });
  };
  return (
    <form
      class="row filters"
      role="search"
      aria-label="Filter memories"
      onSubmit={(e) => {
        e.preventDefault();
        setQuery(loc, {
          q: text,
          entity: fixedEntity === null ? entity : undefined,
          speaker,
          conversation,
        });
      }}
    >
      <label class="grow">
        Words
        <input
          id="filter-q"
          type="search"
          value={text}
          placeholder="all of these words"
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </label>
      <label>
        Kind
        <select
          id="filter-kind"
          value={q.get('kind') ?? ''}
          onChange={(e) => setQuery(loc, { kind: e.currentTarget.value })}
        >
          <option value="">any</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </label>
      {fixedEntity === null && (
        <label>
          Entity
          <input
            id="filter-entity"
            class="narrow"
            list="entity-ids"
            value={entity}
            onInput={(e) => setEntity(e.currentTarget.value)}
            onChange={(e) => setQuery(loc, { entity: e.currentTarget.value })}
          />
          <datalist id="entity-ids">
            {(entities.data ?? []).map((id) => (
              <option key={id} value={id} />
            ))}
          </datalist>
        </label>
      )}
      <label>
        Speaker{' '}
        <input
          id="filter-speaker"
          class="narrow"
          value={speaker}
          onInput={(e) => setSpeaker(e.currentTarget.value)}
          onChange={(e) => setQuery(loc, { speaker: e.currentTarget.value.trim() })}
        />
      </label>
      <label>
        Conversation{' '}
        <input
          id="filter-conversation"
          class="narrow"
          value={conversation}
          onInput={(e) => setConversation(e.currentTarget.value)}
          onChange={(e) => setQuery(loc, { conversation: e.currentTarget.value.trim() })}
        />
      </label>
      <label>
        From{' '}
        <input
          id="filter-from"
          type="date"
          value={Number.isFinite(since) ? dayOf(since) : ''}
          onChange={(e) => setDay('since', e.currentTarget.value)}
        />
      </label>
      <label>
        To{' '}
        <input
          id="filter-to"
          type="date"
          value={Number.isFinite(until) ? dayOf(until - 1) : ''}
          onChange={(e) => setDay('until', e.currentTarget.value)}
        />
      </label>
      <label>
        Sort
        <select
          id="filter-sort"
          value={q.get('sort') ?? 'newest'}
          onChange={(e) =>
            setQuery(loc, {
              sort: e.currentTarget.value === 'newest' ? undefined : e.currentTarget.value,
            })
          }
        >
          {SORTS.map(([id, label]) => (
            <option key={id} value={id}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={q.get('superseded') === '1'}
          onChange={(e) => setQuery(loc, { superseded: e.currentTarget.checked ? '1' : undefined })}
        />{' '}
        superseded versions
      </label>
      <button type="submit" class="sr-only">
        Apply
      </button>
    </form>
  );
}
