/**
 * @module shard/ops/list — the memory list and its timeline: one matcher (entity, kind, superseded,
 * metadata filter, words, creation-time range) over the creation order; pages by creation time
 * either way walk the order from the cursor (an id), pages by another value (importance, accesses,
 * times) keep the best `limit` after a (value, id) cursor in a bounded heap over the matches; the
 * timeline counts the matches per hour or day. Costs are in docs/architecture-notes.md.
 */
import { invalid } from '../../errors/codes.ts';
import type { MemoryKind, MemoryRecord, MemoryView } from '../../model/memory.ts';
import type {
  ListInput,
  ListOutput,
  ListSort,
  TimelineInput,
  TimelineOutput,
} from '../../protocol/shard.ts';
import { replyBytes } from '../../model/json-size.ts';
import { compileFilter } from '../../recall/filter.ts';
import { BoundedTop } from '../index/top-k.ts';
import { DELETED_TAG, OrderedIds } from '../store/ordered-ids.ts';
import { kindOfTag, type Workspace } from '../store/workspace.ts';
import { view, type OpContext } from './context.ts';

/**
 * What a list or a timeline matches. `tagged`: the source is the workspace's creation order (or an
 * entity's), whose tags and times say kind, liveness and creation time without the record;
 * `needsRecord`: some criterion (speaker, conversation, words, filter, the kind of a superseded
 * version) reads the record itself, checked by `accepts`.
 */
interface Matcher {
  source: OrderedIds;
  tagged: boolean;
  needsRecord: boolean;
  kind: MemoryKind | null;
  includeSuperseded: boolean;
  since: number | null;
  until: number | null;
  accepts: (m: MemoryRecord) => boolean;
}

export type ListCriteria = Pick<
  ListInput,
  | 'filter'
  | 'entityId'
  | 'speaker'
  | 'conversationId'
  | 'kind'
  | 'includeSuperseded'
  | 'text'
  | 'since'
  | 'until'
>;

function matcher(w: Workspace, input: ListCriteria): Matcher | null {
  const conversation = input.conversationId ?? null;
  let source =
    conversation !== null
      ? turnIds(w, conversation, input.includeSuperseded)
      : input.entityId === null
        ? w.order
        : w.byEntity.get(input.entityId);
  if (!source) return null;
  let tagged = conversation === null;
  const speaker = input.speaker ?? null;
  const meta = input.filter ? compileFilter(input.filter) : null;
  let words: Set<string> | null = null;
  if (input.text !== undefined && input.text !== null) {
    words = w.lexical.withAllWords(input.text);
    if (words === null)
      throw invalid(
        `q '${input.text.slice(0, 80)}' has no word to match (too common words such as 'the' are not indexed)`,
      );
    if (words.size === 0) return null;
    // Few matches: walk them alone (sorted, O(m log m)) rather than the whole order.
    if (words.size * 16 < source.held) {
      source = sortedIds(words);
      tagged = false;
    }
  }
  const since = input.since ?? null;
  const until = input.until ?? null;
  const accepts = (m: MemoryRecord): boolean =>
    (input.kind === null || m.kind === input.kind) &&
    (input.includeSuperseded || m.supersededBy === null) &&
    (input.entityId === null || m.entityId === input.entityId) &&
    (speaker === null || m.speaker === speaker) &&
    (conversation === null || m.conversationId === conversation) &&
    (since === null || m.createdAt >= since) &&
    (until === null || m.createdAt < until) &&
    (words === null || words.has(m.id)) &&
    (meta === null || meta(m));
  const needsRecord =
    !tagged ||
    speaker !== null ||
    words !== null ||
    meta !== null ||
    (input.includeSuperseded && input.kind !== null);
  return {
    source,
    tagged,
    needsRecord,
    kind: input.kind,
    includeSuperseded: input.includeSuperseded,
    since,
    until,
    accepts,
  };
}

function sortedIds(ids: Iterable<string>): OrderedIds {
  const out = new OrderedIds();
  for (const id of [...ids].sort()) out.add(id);
  return out;
}

/**
 * Visits the matches from position `from` (down with `desc`) until `visit` returns false. On a
 * tagged source the tags and times decide kind, liveness and time without the record; the record
 * is read only when a criterion needs it (`rec` is then given) — a walk is about 10 ns a memory
 * when no record is read.
 */
function walk(
  w: Workspace,
  m: Matcher,
  from: number,
  desc: boolean,
  visit: (id: string, rec: MemoryRecord | undefined, createdAt: number) => boolean,
): void {
  const { ids, tags, times } = m.source.columns();
  for (let i = from; desc ? i >= 0 : i < ids.length; desc ? i-- : i++) {
    const tag = tags[i] as number;
    if (tag === DELETED_TAG) continue;
    if (m.tagged) {
      if (tag < 0 && !m.includeSuperseded) continue;
      if (tag >= 0 && m.kind !== null && kindOfTag(tag) !== m.kind) continue;
      const t = times[i] as number;
      if ((m.since !== null && t < m.since) || (m.until !== null && t >= m.until)) continue;
      if (!m.needsRecord) {
        if (!visit(ids[i] as string, undefined, t)) return;
        continue;
      }
    }
    const rec = w.memories.get(ids[i] as string);
    if (!rec || !m.accepts(rec)) continue;
    if (!visit(rec.id, rec, rec.createdAt)) return;
  }
}

/**
 * A conversation's turns in creation order (with `versions`, their superseded versions too), for
 * a list of one conversation: O(turns · log turns) a page instead of a walk over the workspace.
 */
function turnIds(w: Workspace, conversationId: string, versions: boolean): OrderedIds | undefined {
  const c = w.conversations.get(conversationId);
  if (c === undefined) return undefined;
  const ids = [...c.order.oldestFirst()];
  if (versions) for (const id of [...ids]) ids.push(...(w.versions.get(id) ?? []));
  return sortedIds(ids);
}

/** The value a page is ordered by (ties: the id, which sorts by creation). */
function sortValue(m: MemoryRecord, sort: ListSort): number {
  switch (sort) {
    case 'created_at':
      return m.createdAt;
    case 'updated_at':
      return m.updatedAt;
    case 'importance':
      return m.importance;
    case 'access_count':
      return m.accessCount;
    case 'last_accessed_at':
      return m.lastAccessedAt;
  }
}

export function list(ctx: OpContext, ws: string, input: ListInput): ListOutput {
  const w = ctx.state.workspaces.get(ws);
  const match = w ? matcher(w, input) : null;
  if (!w || !match)
    return { memories: [], nextCursor: null, ...(input.withTotal === true ? { total: 0 } : {}) };
  const sort = input.sort ?? 'created_at';
  const desc = input.order === 'desc';
  return sort === 'created_at'
    ? byCreation(w, match, input, desc)
    : byValue(w, match, input, sort, desc);
}

/** Pages in creation order from the cursor: O(memories walked), plus O(all) for a total. */
function byCreation(w: Workspace, match: Matcher, input: ListInput, desc: boolean): ListOutput {
  const cursor = input.cursor === null ? null : keyOf(input.cursor, 'created_at', desc).id;
  const { ids } = match.source.columns();
  let from = desc ? ids.length - 1 : 0;
  if (cursor !== null) {
    const at = match.source.position(cursor);
    from = desc ? at - 1 : ids[at] === cursor ? at + 1 : at;
  }
  const page: MemoryView[] = [];
  const fits = pageBytes(input.maxBytes);
  let next: string | null = null;
  walk(w, match, from, desc, (id, rec) => {
    const m = rec ?? w.memories.get(id);
    if (!m) return true;
    const v = page.length === input.limit ? null : view(m);
    if (v === null || !fits(v, page.length)) {
      next = page[page.length - 1]?.id ?? null;
      return false;
    }
    page.push(v);
    return true;
  });
  if (input.withTotal !== true) return { memories: page, nextCursor: next };
  return { memories: page, nextCursor: next, total: countAll(w, match, input) };
}

function countAll(w: Workspace, match: Matcher, input: ListCriteria): number {
  const plain =
    input.kind === null &&
    !input.filter &&
    (input.text ?? null) === null &&
    (input.since ?? null) === null &&
    (input.until ?? null) === null &&
    (input.speaker ?? null) === null &&
    (input.conversationId ?? null) === null;
  if (plain && input.entityId === null)
    return input.includeSuperseded ? w.memories.size : w.liveCount();
  let n = 0;
  walk(w, match, 0, false, () => {
    n += 1;
    return true;
  });
  return n;
}

/**
 * Pages by a value: one pass over the matches keeping the best `limit + 1` after the cursor in a
 * bounded heap, O(matches · log limit) a page (no sorted index is kept: access counts change on
 * every read).
 */
function byValue(
  w: Workspace,
  match: Matcher,
  input: ListInput,
  sort: ListSort,
  desc: boolean,
): ListOutput {
  const after = input.cursor === null ? null : keyOf(input.cursor, sort, desc);
  // a before b in the page's order
  const before = (va: number, ia: string, vb: number, ib: string): boolean =>
    desc ? va > vb || (va === vb && ia > ib) : va < vb || (va === vb && ia < ib);
  const held: MemoryRecord[] = [];
  const values: number[] = [];
  const top = new BoundedTop(input.limit + 1, (a, b) =>
    before(
      values[b] as number,
      (held[b] as MemoryRecord).id,
      values[a] as number,
      (held[a] as MemoryRecord).id,
    ),
  );
  let total = 0;
  walk(w, match, 0, false, (id, rec) => {
    const m = rec ?? w.memories.get(id);
    if (!m) return true;
    total += 1;
    const v = sortValue(m, sort);
    if (after !== null && !before(after.value, after.id, v, m.id)) return true;
    // Kept only when it beats the worst of a full heap: most memories are never copied.
    const worst = top.worst;
    if (
      top.full &&
      worst !== undefined &&
      !before(v, m.id, values[worst] as number, (held[worst] as MemoryRecord).id)
    )
      return true;
    held.push(m);
    values.push(v);
    top.add(held.length - 1);
    return true;
  });
  const best = top.sorted().map((slot) => held[slot] as MemoryRecord);
  const fits = pageBytes(input.maxBytes);
  const page: MemoryRecord[] = [];
  const views: MemoryView[] = [];
  for (const m of best.slice(0, input.limit)) {
    const v = view(m);
    if (!fits(v, views.length)) break;
    page.push(m);
    views.push(v);
  }
  const last = page[page.length - 1];
  const nextCursor =
    best.length > page.length && last ? cursorOf(sort, desc, sortValue(last, sort), last.id) : null;
  return { memories: views, nextCursor, ...(input.withTotal === true ? { total } : {}) };
}

/**
 * Whether the next memory's view still fits a page bounded at `maxBytes` (the first always does:
 * one memory over the budget is the reply budget's to refuse). Counts as it goes: O(page bytes).
 */
function pageBytes(maxBytes: number | undefined): (v: MemoryView, held: number) => boolean {
  if (maxBytes === undefined) return () => true;
  let bytes = 0;
  return (v, held) => {
    const b = replyBytes(v) + 1;
    if (held > 0 && bytes + b > maxBytes) return false;
    bytes += b;
    return true;
  };
}

/** A cursor for a page by value: `sort:order:value:id` (a page by creation time uses the bare id). */
function cursorOf(sort: ListSort, desc: boolean, value: number, id: string): string {
  return `${sort}:${desc ? 'desc' : 'asc'}:${value}:${id}`;
}

/** Reads a cursor back; one made for another sort or order is refused, naming both. */
function keyOf(cursor: string, sort: ListSort, desc: boolean): { value: number; id: string } {
  const parts = cursor.split(':');
  if (parts.length === 1) {
    if (sort !== 'created_at')
      throw invalid(
        `cursor '${cursor.slice(0, 40)}' is a page of the creation order; this list is sorted by ${sort}`,
      );
    return { value: 0, id: cursor };
  }
  const [s, o, v, id] = parts;
  const order = desc ? 'desc' : 'asc';
  if (
    parts.length !== 4 ||
    s !== sort ||
    o !== order ||
    id === undefined ||
    !/^[0-9a-f]{32}$/.test(id) ||
    v === undefined ||
    !Number.isFinite(Number(v)) ||
    v === ''
  ) {
    throw invalid(
      `cursor '${cursor.slice(0, 80)}' does not belong to a list sorted by ${sort} ${order}: pass the next_cursor of the same query`,
    );
  }
  return { value: Number(v), id };
}

/** Matching memories per hour or day (local to `offsetUs`), oldest first; O(matches). */
export function timeline(ctx: OpContext, ws: string, input: TimelineInput): TimelineOutput {
  const w = ctx.state.workspaces.get(ws);
  const match = w ? matcher(w, input) : null;
  const bucketUs = input.bucket === 'hour' ? 3_600_000_000 : 86_400_000_000;
  const empty: TimelineOutput = { bucketUs, buckets: [], total: 0 };
  if (!w || !match) return empty;
  const counts = new Map<number, number>();
  let total = 0;
  walk(w, match, 0, false, (_id, _rec, createdAt) => {
    total += 1;
    const start = Math.floor((createdAt + input.offsetUs) / bucketUs) * bucketUs - input.offsetUs;
    counts.set(start, (counts.get(start) ?? 0) + 1);
    if (counts.size > input.maxBuckets) {
      throw invalid(
        `the matching memories span more than ${input.maxBuckets} ${input.bucket} buckets: narrow since_us/until_us or use a wider bucket`,
      );
    }
    return true;
  });
  const buckets = [...counts]
    .sort((a, b) => a[0] - b[0])
    .map(([startUs, count]) => ({ startUs, count }));
  return { bucketUs, buckets, total };
}
