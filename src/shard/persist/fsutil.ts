/** @module shard/persist/fsutil — the names of the log's and snapshots' numbered files. */

export function seqName(prefix: string, seq: number, ext: string): string {
  return `${prefix}-${String(seq).padStart(8, '0')}.${ext}`;
}

export function parseSeq(name: string, prefix: string, ext: string): number | null {
  const m = new RegExp(`^${prefix}-(\\d{8})\\.${ext}$`).exec(name);
  return m?.[1] ? Number(m[1]) : null;
}
