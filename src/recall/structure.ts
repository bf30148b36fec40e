/**
 * @module recall/structure — structural similarity for analogical recall: it compares shape, not
 * words, where a memory's structure is its context keys with their value types, its kind, its
 * entity, and the profile of edge types around it.
 */
import { EDGE_TYPES, type Edge } from '../model/edge.ts';
import type { JsonObject, JsonValue, MemoryKind } from '../model/memory.ts';

export interface Structure {
  keys: Map<string, string>;
  kind: MemoryKind | null;
  entityId: string | null;
  edgeProfile: number[];
}

export function structureOf(
  m: { context: JsonObject; kind: MemoryKind | null; entityId: string | null },
  edges: readonly Edge[],
): Structure {
  const keys = new Map<string, string>();
  for (const [k, v] of Object.entries(m.context)) keys.set(k, typeOf(v));
  const edgeProfile = EDGE_TYPES.map(() => 0);
  for (const e of edges)
    edgeProfile[EDGE_TYPES.indexOf(e.edge_type)] =
      (edgeProfile[EDGE_TYPES.indexOf(e.edge_type)] ?? 0) + 1;
  return { keys, kind: m.kind, entityId: m.entityId, edgeProfile };
}

function typeOf(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * `0.4·keys + 0.3·edges + 0.15·kind + 0.15·entity`, where
 *   keys   = Σ_{k ∈ A∩B} (type equal ? 1 : 0.5) / |A ∪ B|   (0.5 when both have no keys)
 *   edges  = cosine of the edge-type count vectors            (0.5 when both have none)
 *   kind   = 1 if equal, else 0 (0.5 when the reference has none)
 *   entity = 1 if both name the same entity, 0.5 if neither has one, else 0
 */
export function structuralSimilarity(a: Structure, b: Structure): number {
  return (
    0.4 * keySimilarity(a, b) +
    0.3 * edgeSimilarity(a, b) +
    0.15 * kindSimilarity(a, b) +
    0.15 * entitySimilarity(a, b)
  );
}

function keySimilarity(a: Structure, b: Structure): number {
  const union = new Set([...a.keys.keys(), ...b.keys.keys()]);
  if (union.size === 0) return 0.5;
  let shared = 0;
  for (const [k, t] of a.keys) {
    const other = b.keys.get(k);
    if (other !== undefined) shared += other === t ? 1 : 0.5;
  }
  return shared / union.size;
}

function edgeSimilarity(a: Structure, b: Structure): number {
  let d = 0;
  let na = 0;
  let nb = 0;
  a.edgeProfile.forEach((x, i) => {
    const y = b.edgeProfile[i] ?? 0;
    d += x * y;
    na += x * x;
    nb += y * y;
  });
  if (na === 0 && nb === 0) return 0.5;
  if (na === 0 || nb === 0) return 0;
  return d / Math.sqrt(na * nb);
}

function kindSimilarity(a: Structure, b: Structure): number {
  if (a.kind === null) return 0.5;
  return a.kind === b.kind ? 1 : 0;
}

function entitySimilarity(a: Structure, b: Structure): number {
  if (a.entityId === null && b.entityId === null) return 0.5;
  return a.entityId === b.entityId ? 1 : 0;
}
