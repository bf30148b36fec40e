/**
 * @module protocol/browse — the shapes of the shard methods that browse a workspace (the
 * dashboard's lists): list pages and their sorts, the timeline, entity summaries, the graph
 * overview and the contradictions list. Types only; protocol/shard names the methods.
 */
import type { Edge, EdgeType } from '../model/edge.ts';
import type { MemoryKind, MemoryView } from '../model/memory.ts';
import type { FilterNode } from '../recall/filter.ts';

export type ListSort =
  | 'created_at'
  | 'updated_at'
  | 'importance'
  | 'access_count'
  | 'last_accessed_at';

export interface ListOutput {
  memories: MemoryView[];
  nextCursor: string | null;
  total?: number;
}

/** Matching memories counted per hour or day; `offsetUs` moves bucket edges to a local midnight. */
export interface TimelineInput {
  /** As in a list. */
  filter?: FilterNode | null;
  entityId: string | null;
  speaker?: string | null;
  conversationId?: string | null;
  kind: MemoryKind | null;
  includeSuperseded: boolean;
  text?: string | null;
  since?: number | null;
  until?: number | null;
  bucket: 'hour' | 'day';
  offsetUs: number;
  maxBuckets: number;
}

export interface TimelineOutput {
  bucketUs: number;
  /** Buckets holding at least one match, oldest first. */
  buckets: Array<{ startUs: number; count: number }>;
  total: number;
}

export interface EntitySummary {
  entityId: string;
  /** Live memories about the entity. */
  memories: number;
  firstAt: number;
  /** The latest creation or revision among them. */
  lastAt: number;
  kinds: Partial<Record<MemoryKind, number>>;
}

export interface EntitySummariesInput {
  /** Only entity ids containing this text (case-insensitive). */
  text: string | null;
  sort: 'name' | 'memories' | 'recent';
  limit: number;
}

/** A workspace's (or an entity's) graph without a centre: the `maxNodes` most important memories. */
export interface OverviewInput {
  entityId: string | null;
  kind: MemoryKind | null;
  maxNodes: number;
  edgeTypes: EdgeType[] | null;
}

export interface OverviewOutput {
  nodes: MemoryView[];
  edges: Edge[];
  /** Memories the overview chose from (an entity's: its memories and their neighbours). */
  totalNodes: number;
  truncated: boolean;
}
