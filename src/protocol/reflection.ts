/**
 * @module protocol/reflection — the shard commands' shapes for reflection and contradictions: the
 * episodes gathered for a reflection, the insights written back, pending and confirmed
 * contradictions and the verdicts on them. Types only, as protocol/shard.
 */
import type { JsonObject, MemoryView } from '../model/memory.ts';

export interface PendingContradiction {
  pending_id: string;
  memory_id_a: string;
  memory_id_b: string;
  content_a_snippet: string;
  content_b_snippet: string;
  classifier_score: number;
  classifier_method: 'heuristic' | 'llm';
  similarity: number;
  created_at: number;
  /** What the classifier leaned towards. */
  proposed: 'contradiction' | 'revision';
  /** The rule that fired ("negation scope: …"); absent in files written before it was recorded. */
  reason?: string;
}

export interface ConfirmedContradiction {
  a: MemoryView;
  b: MemoryView;
  confidence: number;
  reason: string | null;
  timestampUs: number;
}

export interface ContradictionsOutput {
  confirmed: ConfirmedContradiction[];
  pending: Array<{ candidate: PendingContradiction; a: MemoryView; b: MemoryView }>;
  /** Whether more confirmed pairs or candidates exist than `limit`. */
  truncated: boolean;
}

export interface GatherInput {
  entityId: string | null;
  sinceUs: number | null;
  max: number;
}

export interface GatherOutput {
  ids: string[];
  texts: string[];
  meta: Array<{ importance: number; entityId: string | null; createdAt: number }>;
  vectors: Float32Array;
  dim: number;
  insights: Array<{ id: string; sources: string[] }>;
}

export interface InsightWrite {
  content: string;
  embedding: Float32Array;
  sources: string[];
  confidence: number;
  importance: number;
  entityId: string | null;
  context: JsonObject;
  /** An existing insight to refresh in place, or null for a new one. */
  refreshId: string | null;
}

export interface Verdicts {
  verdicts: Array<{ pendingId: string; verdict: string; confidence: number }>;
}

export interface VerdictResult {
  contradictions_confirmed: number;
  revisions_created: number;
  dismissed: number;
}
