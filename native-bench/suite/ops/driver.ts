/**
 * @module native-bench/suite/ops/driver — what the measured operations need from a protocol: one
 * method per verb, in protocol-neutral terms (ids are 32-hex strings). REST and gRPC implement it;
 * each method rejects on an error reply, so the closed loop counts it.
 */

export type ContextValue = string | number | boolean | string[];
export type EdgeKind = 'caused_by' | 'followed_by' | 'related_to';
export type StrategyName = 'similarity' | 'temporal' | 'causal' | 'analogical';

export interface MemoryInput {
  content: string;
  importance: number;
  context: Record<string, ContextValue>;
  entityId: string | null;
  edges: Array<{ targetId: string; type: EdgeKind }>;
}

export interface StrategyInput {
  strategy: StrategyName;
  entityId?: string;
  seedId?: string;
  maxDepth?: number;
}

export interface RecallInput {
  cue: string;
  topK: number;
  strategies: StrategyInput[];
}

export interface PrimeInput {
  entityId: string;
  cue: string;
  maxMemories: number;
}

/** One open subscription: feed text, and learn which memories were pushed. */
export interface Subscription {
  /** Resolves once the server accepted the text (its reply arrived). */
  feed(text: string): Promise<void>;
  /** Called with each pushed memory's id, as its push arrives. */
  onPush(listener: (memoryId: string) => void): void;
  close(): Promise<void>;
}

export interface Driver {
  readonly protocol: 'rest' | 'grpc';
  /** Stores a memory; resolves with its id. */
  remember(m: MemoryInput): Promise<string>;
  get(id: string): Promise<void>;
  /** Resolves with the number of results. */
  recall(r: RecallInput): Promise<number>;
  prime(p: PrimeInput): Promise<number>;
  revise(id: string, content: string): Promise<void>;
  /** Resolves with the number of memories forgotten. */
  forget(id: string): Promise<number>;
  subscribe(opts: { threshold: number }): Promise<Subscription>;
  close(): void;
}
