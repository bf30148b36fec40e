/**
 * @module shard/persist/content-index — where on disk each memory's content lies: for every frame
 * of the shard's files that holds a memory's text (its `put` and `unsource` frames, the `pending`
 * contradictions quoting it, the edges whose reason quotes it), the file, the offset and a 32-bit
 * hash of the memory's id. Erasure (shard/persist/erase) looks up the frames of what was forgotten
 * here instead of rewriting the whole store. 12 bytes per entry, in typed arrays.
 */
import type { LogRecord } from '../store/records.ts';
import { parseSeq } from './fsutil.ts';

/** A frame in one of the shard's files. */
export interface FrameAt {
  file: string;
  offset: number;
}

/** Ids of the memories whose content the record holds (quotes included). */
export function contentKeys(r: LogRecord): readonly string[] {
  switch (r.t) {
    case 'put':
    case 'unsource':
      return [r.m.id];
    case 'pending':
      return [r.p.memory_id_a, r.p.memory_id_b];
    case 'edge':
      return r.e.reason === undefined ? [] : [r.e.source_id, r.e.target_id];
    default:
      return [];
  }
}

/** FNV-1a over the string's UTF-16 code units. */
export function idHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** One file's entries, in the order its frames were written. */
class FileEntries {
  keys = new Uint32Array(64);
  offsets = new Float64Array(64);
  n = 0;

  add(key: number, offset: number): void {
    if (this.n === this.keys.length) {
      const keys = new Uint32Array(this.n * 2);
      keys.set(this.keys);
      this.keys = keys;
      const offsets = new Float64Array(this.n * 2);
      offsets.set(this.offsets);
      this.offsets = offsets;
    }
    this.keys[this.n] = key;
    this.offsets[this.n] = offset;
    this.n += 1;
  }

  /** Drops the entries at these offsets, keeping the others in order. */
  release(offsets: ReadonlySet<number>): void {
    let kept = 0;
    for (let i = 0; i < this.n; i++) {
      const offset = this.offsets[i] as number;
      if (offsets.has(offset)) continue;
      this.keys[kept] = this.keys[i] as number;
      this.offsets[kept] = offset;
      kept += 1;
    }
    this.n = kept;
  }
}

export class ContentIndex {
  readonly #files = new Map<string, FileEntries>();

  /** Notes the frame at `offset` of `file` (a file name inside the shard's directory) holding `record`. */
  add(file: string, offset: number, record: LogRecord): void {
    const keys = contentKeys(record);
    if (keys.length === 0) return;
    let entries = this.#files.get(file);
    if (!entries) this.#files.set(file, (entries = new FileEntries()));
    for (const id of keys) entries.add(idHash(id), offset);
  }

  /**
   * Forgets the entries of `frames` (frames an erasure padded or found padded already): they hold
   * no content any more, and a later erasure would otherwise read each of them again, so that
   * every erasure until the next snapshot cost all the rewrites before it.
   */
  release(frames: readonly FrameAt[]): void {
    const byFile = new Map<string, Set<number>>();
    for (const f of frames) {
      const offsets = byFile.get(f.file) ?? new Set<number>();
      offsets.add(f.offset);
      byFile.set(f.file, offsets);
    }
    for (const [file, offsets] of byFile) {
      const e = this.#files.get(file);
      if (e) e.release(offsets);
    }
  }

  /** Forgets a file's entries (the file was deleted). */
  dropFile(file: string): void {
    this.#files.delete(file);
  }

  /** Forgets the entries of log segments and snapshots numbered below `seq` (a snapshot deleted them). */
  dropBefore(seq: number): void {
    for (const file of this.#files.keys()) {
      const n = parseSeq(file, 'wal', 'log') ?? parseSeq(file, 'snap', 'snap');
      if (n !== null && n < seq) this.#files.delete(file);
    }
  }

  get entries(): number {
    let n = 0;
    for (const f of this.#files.values()) n += f.n;
    return n;
  }

  /**
   * Frames that may hold content of any of `ids`: those whose hash matches (the caller decodes
   * each to check it). One pass over the typed arrays, through a 64 Ki-bit filter of the hashes.
   */
  find(ids: Iterable<string>): FrameAt[] {
    const wanted = new Set<number>();
    const filter = new Uint8Array(8192);
    for (const id of ids) {
      const h = idHash(id);
      wanted.add(h);
      filter[(h & 0xffff) >>> 3] = (filter[(h & 0xffff) >>> 3] as number) | (1 << (h & 7));
    }
    const out: FrameAt[] = [];
    if (wanted.size === 0) return out;
    for (const [file, e] of this.#files) {
      let last = -1;
      for (let i = 0; i < e.n; i++) {
        const h = e.keys[i] as number;
        if (((filter[(h & 0xffff) >>> 3] as number) & (1 << (h & 7))) === 0 || !wanted.has(h))
          continue;
        const offset = e.offsets[i] as number;
        // A frame with two matching keys (an edge between two forgotten memories) is listed once.
        if (offset !== last) out.push({ file, offset });
        last = offset;
      }
    }
    return out;
  }
}
