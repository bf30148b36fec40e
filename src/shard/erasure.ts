/**
 * @module shard/erasure — when and what erasure removes. Forgotten content leaves every file within
 * FLASHBULB_ERASE_WITHIN_S: the frames that hold it are padded in place (shard/persist/erase, found
 * through shard/persist/content-index), or, when that cannot be done (a workspace dropped, a
 * crash's log replayed, files this process has not indexed), a snapshot rewrites the whole store.
 * The erasure starts as late as the window safely allows: a quarter of the window after the first
 * forget, less twice the last snapshot's duration, and never sooner than `min(1 s, window / 4)`.
 * One erasure then covers every forget before it.
 */
import { encodeRecord, type LiveRecord, type LogRecord } from './store/records.ts';
import { contentKeys, type ContentIndex } from './persist/content-index.ts';
import { eraseFrames } from './persist/erase.ts';
import type { Wal } from './persist/wal.ts';
import type { ShardState } from './store/apply.ts';

export class ErasureTimer {
  readonly #windowMs: number;
  readonly #run: () => void;
  #timer: NodeJS.Timeout | null = null;
  /** How long the last snapshot took (set by the shard after each one). */
  lastSnapshotMs = 0;

  constructor(windowS: number, run: () => void) {
    this.#windowMs = windowS * 1000;
    this.#run = run;
  }

  /** Asks for an erasure snapshot; one already asked for and not yet started covers this request too. */
  request(): void {
    if (this.#timer) return;
    const quarter = this.#windowMs / 4;
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        this.#run();
      },
      Math.max(Math.min(1000, quarter), quarter - 2 * this.lastSnapshotMs),
    );
  }

  cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}

/** What an erasure must remove: frames keyed by forgotten ids, and the older frames of rewritten memories. */
export interface ErasurePlan {
  /** A whole-store snapshot is needed (a workspace dropped, a crash's log replayed, or files not indexed). */
  full: boolean;
  /** Forgotten memories (workspace by id): every frame holding their content goes. */
  erase: Map<string, string>;
  /** Memories rewritten without forgotten content (insights that lost sources): their older frames go. */
  rewritten: Map<string, string>;
}

/**
 * Collects what forgets ask to erase until the erasure runs. A forget's records name it all: the
 * `del`s (the memories, their versions, insights left without sources) and the `put`s and
 * `unsource`s (insights rewritten without the forgotten text).
 */
export class ErasureRequests {
  #plan: ErasurePlan = emptyPlan();

  add(records: readonly LiveRecord[] | 'all'): void {
    if (records === 'all') {
      this.#plan.full = true;
      return;
    }
    for (const r of records) {
      if (r.t === 'del') this.#plan.erase.set(r.id, r.ws);
      else if (r.t === 'put' || r.t === 'unsource') this.#plan.rewritten.set(r.m.id, r.ws);
    }
  }

  /** The plan so far; requests after this call start a new one. */
  take(): ErasurePlan {
    const plan = this.#plan;
    this.#plan = emptyPlan();
    for (const id of plan.erase.keys()) plan.rewritten.delete(id);
    return plan;
  }
}

function emptyPlan(): ErasurePlan {
  return { full: false, erase: new Map(), rewritten: new Map() };
}

/** Whether a frame's record holds content the plan erases (shard/persist/content-index `contentKeys`). */
export function erasesRecord(plan: ErasurePlan, r: LogRecord): boolean {
  if ((r.t === 'put' || r.t === 'unsource') && plan.rewritten.has(r.m.id)) return true;
  return contentKeys(r).some((id) => plan.erase.has(id));
}

/**
 * Erases the plan in place. Each rewritten memory still live is first logged whole again (an
 * `unsource` needs the state before it, which is being erased); then every older frame of the
 * plan is padded. Runs in turn with snapshots (they delete the files it writes to).
 */
export async function eraseInPlace(
  where: { dir: string; wal: Wal; state: ShardState; content: ContentIndex },
  plan: ErasurePlan,
): Promise<number> {
  await where.wal.drain();
  const restated: LogRecord[] = [];
  for (const [id, ws] of plan.rewritten) {
    const m = where.state.workspaces.get(ws)?.memories.get(id);
    if (m) restated.push(encodeRecord({ t: 'put', ws, m }));
    else plan.erase.set(id, ws);
  }
  const frames = where.content.find([...plan.erase.keys(), ...plan.rewritten.keys()]);
  await where.wal.append(restated);
  const erased = await eraseFrames(where.dir, frames, (r) => erasesRecord(plan, r));
  // Padded frames leave the index, so that the next erasure does not read them all again.
  where.content.release(erased.cleared);
  return erased.padded;
}
