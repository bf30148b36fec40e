/**
 * @module shard/contradictions — after a write, off the request path, a new memory is compared
 * with its nearest neighbours by vector and the memories sharing most of its words. Confident contradictions get `contradicts` edges both ways,
 * confident updates a `revised_from` edge newer → older, and uncertain pairs become pending
 * candidates that the (deprecated) prepare/commit flow exposes.
 */
import { randomBytes } from 'node:crypto';
import { notFound } from '../errors/codes.ts';
import { wallClock, type Clock } from '../model/clock.ts';
import { eventOrder, type MemoryRecord } from '../model/memory.ts';
import { classifyPair, CONFIDENT, isCandidate, UNCERTAIN } from '../analysis/contradiction.ts';
import { EMPTY_LEXICON, type Lexicon } from '../analysis/lexicon.ts';
import { loadLexicon } from './lexicon-loader.ts';
import type { LiveRecord } from './store/records.ts';
import type { PendingContradiction, Verdicts, VerdictResult } from '../protocol/reflection.ts';
import type { Workspace } from './store/workspace.ts';
import type { Neighbour } from './index/vector-index.ts';
import type { ShardState } from './store/apply.ts';
import { givesWay, nextTurn } from '../threads/turn.ts';

const NEIGHBOURS = 6;
/**
 * Memories that share the most words with the new one (the workspace's lexical index, BM25) are
 * compared too, beside the nearest by vector: a negation or an opposite moves the embedding while
 * the words stay ("A person is playing the guitar" / "Nobody is playing the guitar"), and in a
 * workspace full of similar memories the pair can fall outside the 6 nearest.
 */
const LEXICAL_NEIGHBOURS = 3;
/**
 * Memories waiting for a check, at most (~100 bytes each). Past it the oldest are skipped and
 * counted; at ~700 checks/s per shard it takes minutes of writes faster than the shard can check
 * to get there (the real model embeds ~150 texts/s, so only bulk writes with the hash embedder can).
 */
const MAX_BACKLOG = 100_000;
/** Backlog below which checks give way to the vector indexer when it is far behind. */
const YIELD_BELOW = 2048;
const CHECKED_KINDS = new Set(['episode', 'revision']);

/** Longest stretch one slice of checks holds the shard's thread. */
const SLICE_MS = 4;

export interface CheckerOptions {
  /** Applies and logs what the checks find. */
  commit: (records: LiveRecord[]) => Promise<void>;
  /** True once the shard drains: checks stop. */
  stopping: () => boolean;
  /** True while checks should give way to the vector indexer (default: never). */
  wait?: () => boolean;
  /** "Now" for the edges and candidates the checks write (the shard's clock; default the wall clock). */
  clock?: Clock;
  /** True when a request is waiting on the shard: the slice ends after the check under way (past MIN_SLICE_MS). */
  requestWaiting?: () => boolean;
}

/**
 * Queues new memories and checks them between requests, in slices of a few milliseconds, after
 * their write has been answered. `commit` applies and logs what the checks find. While `wait()`
 * says so (the vector indexer is far behind, which makes every neighbour search an expensive
 * exact scan) and the backlog is short, checks pause: they are off the request path, and indexing
 * first makes them cheap. A long backlog runs anyway, slice for slice with the indexer.
 */
export class ContradictionChecker {
  #queue: Array<[string, string]> = [];
  #head = 0;
  #running = false;
  #lexicon: Lexicon | null = null;
  /** Contradictions found since the last metrics report. */
  found = 0;
  /** Checks skipped because the backlog overflowed. */
  skipped = 0;

  readonly #state: ShardState;
  readonly #commit: (records: LiveRecord[]) => Promise<void>;
  readonly #stopping: () => boolean;
  readonly #wait: () => boolean;
  readonly #clock: Clock;
  readonly #requestWaiting: () => boolean;

  constructor(state: ShardState, opts: CheckerOptions) {
    this.#state = state;
    this.#commit = opts.commit;
    this.#stopping = opts.stopping;
    this.#wait = opts.wait ?? (() => false);
    this.#clock = opts.clock ?? wallClock;
    this.#requestWaiting = opts.requestWaiting ?? (() => false);
  }

  /** Contradictions found and checks skipped since the last call (for metrics). */
  take(): { found: number; skipped: number } {
    const out = { found: this.found, skipped: this.skipped };
    this.found = 0;
    this.skipped = 0;
    return out;
  }

  get backlog(): number {
    return this.#queue.length - this.#head;
  }

  enqueue(records: readonly LiveRecord[]): void {
    for (const r of records)
      if (r.t === 'put' && r.m.supersededBy === null) this.#queue.push([r.ws, r.m.id]);
    // Under a write burst the checks fall behind; the backlog is bounded and the oldest skipped.
    const over = this.backlog - MAX_BACKLOG;
    if (over > 0) {
      this.skipped += over;
      this.#head += over;
    }
    if (this.backlog === 0 || this.#running) return;
    this.#running = true;
    setImmediate(() => void this.#run());
  }

  async #run(): Promise<void> {
    try {
      // WordNet is read once, on the first check (not on start-up, nor on a write's path).
      this.#lexicon ??= await loadLexicon();
      while (this.backlog > 0 && !this.#stopping()) {
        if (this.backlog < YIELD_BELOW && this.#wait()) {
          await new Promise((r) => setTimeout(r, SLICE_MS));
          continue;
        }
        const records = this.#slice(performance.now());
        if (records.length > 0) await this.#commit(records);
        await nextTurn();
      }
    } catch (err) {
      if (!this.#stopping()) console.error('contradiction check failed:', err); // stopping: the shard said why
    } finally {
      this.#running = false;
    }
  }

  /** Checks queued memories for SLICE_MS, or MIN_SLICE_MS when a request is waiting; returns what they found. */
  #slice(start: number): LiveRecord[] {
    const records: LiveRecord[] = [];
    while (this.#head < this.#queue.length) {
      const [ws, id] = this.#queue[this.#head++] as [string, string];
      const w = this.#state.workspaces.get(ws);
      const m = w?.memories.get(id);
      if (w && m) {
        const checked = checkContradictions(
          w,
          [m],
          this.#clock.nowUs(),
          this.#lexicon ?? EMPTY_LEXICON,
        );
        this.found += checked.found;
        records.push(...checked.records);
      }
      if (performance.now() - start >= SLICE_MS || givesWay(start, this.#requestWaiting)) break;
    }
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 4096) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return records;
  }
}

/** Records (edges, pending candidates) for the new memories of one write. */
export function checkContradictions(
  w: Workspace,
  memories: readonly MemoryRecord[],
  nowUs: number,
  lexicon: Lexicon = EMPTY_LEXICON,
): { records: LiveRecord[]; found: number } {
  const records: LiveRecord[] = [];
  let found = 0;
  for (const m of memories) {
    if (!CHECKED_KINDS.has(m.kind) || m.supersededBy !== null) continue;
    for (const { id, sim } of neighboursOf(w, m)) {
      const other = w.memories.get(id);
      if (!other || id === m.id || !CHECKED_KINDS.has(other.kind) || linked(w, m.id, id)) continue;
      // Each pair is judged once, by the check of its most recently written member: a check that
      // runs late (the queue lags under load) must not judge a pair again that the newer memory's
      // own check already judged — and perhaps a verdict already dismissed.
      if (other.updatedAt > m.updatedAt || (other.updatedAt === m.updatedAt && other.id > m.id))
        continue;
      const [older, newer] = eventOrder(other, m) <= 0 ? [other, m] : [m, other];
      if (!isCandidate(older.content, newer.content, sim)) continue;
      const c = classifyPair(older.content, newer.content, sim, {
        lexicon,
        sameEntity: older.entityId !== null && older.entityId === newer.entityId,
      });
      if (c.verdict === 'none' || c.score < UNCERTAIN) continue;
      found += 1;
      if (c.score >= CONFIDENT)
        records.push(
          ...verdictEdges(w.slug, older.id, newer.id, c.verdict, c.score, nowUs, c.reason),
        );
      else
        records.push({
          t: 'pending',
          ws: w.slug,
          p: { ...pending(older, newer, c.score, sim, c.verdict, nowUs), reason: c.reason },
        });
    }
  }
  return { records, found };
}

/** The memory's nearest by vector, then those sharing most of its words (with their cosine). */
function neighboursOf(w: Workspace, m: MemoryRecord): Neighbour[] {
  const near = w.vectors.search(m.embedding, { k: NEIGHBOURS + 1, ef: 64 });
  // Right after a restart the lexical index may still be filling (the indexer's job): not forced here.
  if (w.lexicalBacklog > 0) return near;
  const seen = new Set(near.map((n) => n.id));
  seen.add(m.id);
  for (const hit of w.lexical.search(
    w.lexical.query(m.content),
    LEXICAL_NEIGHBOURS,
    (id) => !seen.has(id),
  )) {
    const other = w.memories.get(hit.id);
    if (other) near.push({ id: hit.id, sim: cosine(m.embedding, other.embedding) });
  }
  return near;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

function linked(w: Workspace, a: string, b: string): boolean {
  const touches = (x: string, y: string): boolean =>
    w.graph
      .outgoing(x)
      .some(
        (e) =>
          e.target_id === y && (e.edge_type === 'contradicts' || e.edge_type === 'revised_from'),
      );
  return touches(a, b) || touches(b, a) || w.pending.between(a, b);
}

function pending(
  older: MemoryRecord,
  newer: MemoryRecord,
  score: number,
  sim: number,
  proposed: 'contradiction' | 'revision',
  nowUs: number,
): PendingContradiction {
  return {
    pending_id: pendingId(),
    memory_id_a: older.id,
    memory_id_b: newer.id,
    content_a_snippet: snippet(older.content),
    content_b_snippet: snippet(newer.content),
    classifier_score: score,
    classifier_method: 'heuristic',
    similarity: sim,
    created_at: nowUs,
    proposed,
  };
}

/** Random bytes for pending ids, drawn 4 KiB at a time: one randomBytes call per 256 ids, not one each. */
let idPool = Buffer.alloc(0);
let idAt = 0;

function pendingId(): string {
  if (idAt + 16 > idPool.length) [idPool, idAt] = [randomBytes(4096), 0];
  idAt += 16;
  return idPool.toString('hex', idAt - 16, idAt);
}

function snippet(text: string): string {
  return text.length > 200 ? `${text.slice(0, 197)}…` : text;
}

function verdictEdges(
  ws: string,
  older: string,
  newer: string,
  verdict: 'contradiction' | 'revision',
  confidence: number,
  now: number,
  reason: string,
): LiveRecord[] {
  if (verdict === 'revision') {
    return [
      {
        t: 'edge',
        ws,
        e: {
          source_id: newer,
          target_id: older,
          edge_type: 'revised_from',
          confidence,
          timestamp_us: now,
          reason,
        },
      },
    ];
  }
  return [
    {
      t: 'edge',
      ws,
      e: {
        source_id: newer,
        target_id: older,
        edge_type: 'contradicts',
        confidence,
        timestamp_us: now,
        reason,
      },
    },
    {
      t: 'edge',
      ws,
      e: {
        source_id: older,
        target_id: newer,
        edge_type: 'contradicts',
        confidence,
        timestamp_us: now,
        reason,
      },
    },
  ];
}

/** Applies verdicts all or nothing: an unknown pending id fails the whole commit. */
export function commitVerdicts(
  w: Workspace | undefined,
  input: Verdicts,
  nowUs: number,
): { records: LiveRecord[]; result: VerdictResult } {
  const unknown = input.verdicts
    .filter((v) => !w?.pending.has(v.pendingId))
    .map((v) => v.pendingId);
  if (!w || unknown.length > 0)
    throw notFound(`pending contradictions not found: ${unknown.join(', ')}`);
  const result: VerdictResult = { contradictions_confirmed: 0, revisions_created: 0, dismissed: 0 };
  const records: LiveRecord[] = [];
  for (const v of input.verdicts) {
    const p = w.pending.get(v.pendingId) as PendingContradiction;
    records.push({ t: 'unpending', ws: w.slug, id: p.pending_id });
    const reason = `confirmed by a verdict${p.reason === undefined ? '' : ` (${p.reason})`}`;
    if (v.verdict === 'contradiction') {
      records.push(
        ...verdictEdges(
          w.slug,
          p.memory_id_a,
          p.memory_id_b,
          'contradiction',
          v.confidence,
          nowUs,
          reason,
        ),
      );
      result.contradictions_confirmed += 1;
    } else if (v.verdict === 'revision') {
      records.push(
        ...verdictEdges(
          w.slug,
          p.memory_id_a,
          p.memory_id_b,
          'revision',
          v.confidence,
          nowUs,
          reason,
        ),
      );
      result.revisions_created += 1;
    } else {
      result.dismissed += 1;
    }
  }
  return { records, result };
}
