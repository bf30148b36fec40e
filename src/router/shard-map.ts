/** @module router/shard-map — which shard owns a workspace: FNV-1a of the slug modulo the shard count. */

export function shardFor(slug: string, shardCount: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < slug.length; i++) {
    h ^= slug.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shardCount;
}
