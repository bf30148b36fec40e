/** @module model/edge — typed edges between memories and the accepted spellings of their types. */

export const EDGE_TYPES = [
  'caused_by',
  'related_to',
  'followed_by',
  'revised_from',
  'insight_from',
  'contradicts',
  'has_entity',
  'entity_relation',
  'proposition_of',
] as const;
export type EdgeType = (typeof EDGE_TYPES)[number];

/** Edge as stored and as REST returns it. The source is the newer or derived memory. */
export interface Edge {
  source_id: string;
  target_id: string;
  edge_type: EdgeType;
  confidence: number;
  timestamp_us: number;
  /** `contradicts` and `revised_from` edges the checker made: the rule that fired ("negation scope: …"). */
  reason?: string;
}

const BY_SQUASHED = new Map<string, EdgeType>(EDGE_TYPES.map((t) => [t.replaceAll('_', ''), t]));

/**
 * Normalises `caused_by`, `CausedBy`, `CAUSED_BY` and `EDGE_TYPE_CAUSED_BY` (any case) to the
 * REST spelling; returns null for an unknown name.
 */
export function parseEdgeType(name: string): EdgeType | null {
  let squashed = name.toLowerCase().replaceAll('_', '');
  if (squashed.startsWith('edgetype')) squashed = squashed.slice('edgetype'.length);
  return BY_SQUASHED.get(squashed) ?? null;
}

/** The proto enum value of an edge type (1..9). */
export function edgeTypeNumber(type: EdgeType): number {
  return EDGE_TYPES.indexOf(type) + 1;
}
