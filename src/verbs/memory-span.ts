/**
 * @module verbs/memory-span — what a memory operation tells the span it runs in (the verb's),
 * after the OpenTelemetry GenAI memory conventions: `gen_ai.operation.name` (search_memory,
 * create_memory, update_memory, delete_memory, create_memory_store, delete_memory_store),
 * `gen_ai.provider.name` flashbulb, `gen_ai.memory.store.id` (the workspace slug),
 * `gen_ai.memory.record.id` when the operation is about one memory, `gen_ai.memory.record.count`
 * (returned, created, updated or deleted), and for recalls `flashbulb.recall.strategies`. Never the
 * query text or a memory's content (the conventions' opt-in attributes). Nothing when tracing is off.
 */
import { tracer, type Attributes } from '../tracing/index.ts';

export type MemoryOperation =
  | 'search_memory'
  | 'create_memory'
  | 'update_memory'
  | 'delete_memory'
  | 'create_memory_store'
  | 'delete_memory_store';

export interface MemoryOperationFacts {
  count?: number;
  recordId?: string;
  strategies?: readonly string[];
}

export function memorySpan(
  workspace: string,
  operation: MemoryOperation,
  facts: MemoryOperationFacts = {},
): void {
  const t = tracer();
  if (!t.enabled) return;
  const a: Attributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': 'flashbulb',
    'gen_ai.memory.store.id': workspace,
  };
  if (facts.count !== undefined) a['gen_ai.memory.record.count'] = facts.count;
  if (facts.recordId !== undefined) a['gen_ai.memory.record.id'] = facts.recordId;
  if (facts.strategies !== undefined) a['flashbulb.recall.strategies'] = [...facts.strategies];
  t.annotate(a);
}
