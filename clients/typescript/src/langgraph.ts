/**
 * @module @flashbulb/client/langgraph — LangGraph.js long-term memory on Flashbulb:
 * `new FlashbulbStore(client)` implements `BaseStore` from `@langchain/langgraph-checkpoint`
 * (an optional peer dependency). The mapping is the Python store's (`flashbulb.langgraph`), so
 * both languages read and write the same items:
 *
 * - one memory per (namespace, key) in the client's workspace (give the store its own);
 * - `entity_id` is the namespace joined with `/` (`%` and `/` in a part escaped), so
 *   `listNamespaces` reads the workspace's entities;
 * - `context` holds `{langgraph: {key, depth, p0, p1, …}, value}`: a namespace prefix and a search
 *   `filter` on the value's fields are Flashbulb metadata filters;
 * - the text Flashbulb embeds is the value's `index` fields, or the whole value as JSON (`index:
 *   false` stores the key: found by filters, not by meaning);
 * - a put on an existing key revises the memory (versions kept), a put of `null` forgets it;
 * - `search({query})` is a hybrid recall (`score` = relevance); without a query, oldest first;
 *   `new FlashbulbStore(client, { minRelevance })` drops hits below that relevance (recall's
 *   `min_relevance`), so a query nothing matches finds nothing.
 */
import {
  BaseStore,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type { FlashbulbClient } from './index.ts';
import type { Memory } from './generated.ts';

const COMPARISONS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte']);
const PAGE = 500;

export function encodeNamespace(namespace: readonly string[]): string {
  return namespace.map((p) => p.replaceAll('%', '%25').replaceAll('/', '%2F')).join('/');
}

export function decodeNamespace(entity: string): string[] {
  return entity.split('/').map((p) => p.replaceAll('%2F', '/').replaceAll('%25', '%'));
}

interface Stored {
  langgraph: { key: string };
  value: Record<string, unknown>;
}

function toItem(m: Memory): Item {
  const ctx = m.context as unknown as Stored;
  return {
    value: ctx.value,
    key: ctx.langgraph.key,
    namespace: decodeNamespace(m.entity_id ?? ''),
    createdAt: new Date(m.created_at / 1000),
    updatedAt: new Date(m.updated_at / 1000),
  };
}

function text(key: string, value: Record<string, unknown>, index: PutOperation['index']): string {
  if (index === false) return key;
  if (Array.isArray(index) && index.length > 0) {
    const parts = index.map((f) => value[f]).filter((v) => v !== undefined && v !== null);
    const joined = parts.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' ');
    return joined === '' ? key : joined;
  }
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
  );
}

function searchFilter(op: SearchOperation): Record<string, unknown> {
  const out: Record<string, unknown> = { 'context.langgraph.key': { $exists: true } };
  op.namespacePrefix.forEach((part, i) => {
    out[`context.langgraph.p${i}`] = part;
  });
  for (const [field, cond] of Object.entries(op.filter ?? {})) {
    const isOps =
      cond !== null &&
      typeof cond === 'object' &&
      !Array.isArray(cond) &&
      Object.keys(cond).every((k) => COMPARISONS.has(k));
    if (cond !== null && typeof cond === 'object' && !isOps)
      throw new Error(`filter.${field}: only scalars and $eq/$ne/$gt/$gte/$lt/$lte are supported`);
    out[`context.value.${field}`] = cond;
  }
  return out;
}

function matches(ns: string[], c: MatchCondition): boolean {
  if (ns.length < c.path.length) return false;
  const [a, b] =
    c.matchType === 'prefix' ? [ns, c.path] : [[...ns].reverse(), [...c.path].reverse()];
  return b.every((p, i) => p === '*' || p === a[i]);
}

export interface FlashbulbStoreOptions {
  /** Searches with a query leave out items whose relevance is below this (0..1; default: none). */
  minRelevance?: number;
}

/** A LangGraph.js `BaseStore` over a `FlashbulbClient` (see the module's notes). */
export class FlashbulbStore extends BaseStore {
  readonly client: FlashbulbClient;
  readonly options: FlashbulbStoreOptions;

  constructor(client: FlashbulbClient, options: FlashbulbStoreOptions = {}) {
    super();
    this.client = client;
    this.options = options;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const out: unknown[] = [];
    for (const op of operations) out.push(await this.#run(op));
    return out as OperationResults<Op>;
  }

  async #run(op: Operation): Promise<unknown> {
    if ('value' in op) return this.#put(op);
    if ('namespacePrefix' in op) return this.#search(op);
    if ('key' in op) {
      const m = await this.#find(op.namespace, op.key);
      return m ? toItem(m) : null;
    }
    return this.#listNamespaces(op);
  }

  async #find(namespace: string[], key: string): Promise<Memory | undefined> {
    const page = await this.client.list({
      entity_id: encodeNamespace(namespace),
      limit: 1,
      filter: JSON.stringify({ 'context.langgraph.key': key }),
    });
    return page.memories[0];
  }

  async #put(op: PutOperation): Promise<void> {
    const existing = await this.#find(op.namespace, op.key);
    if (op.value === null) {
      if (existing) await this.client.forget({ memory_ids: [existing.memory_id] });
      return;
    }
    const meta: Record<string, unknown> = { key: op.key, depth: op.namespace.length };
    op.namespace.forEach((part, i) => {
      meta[`p${i}`] = part;
    });
    const context = { langgraph: meta, value: op.value };
    const content = text(op.key, op.value, op.index);
    if (existing)
      await this.client.revise(existing.memory_id, { content, context, context_mode: 'replace' });
    else await this.client.remember({ content, context, entity_id: encodeNamespace(op.namespace) });
  }

  async #search(op: SearchOperation): Promise<SearchItem[]> {
    const filter = searchFilter(op);
    const offset = op.offset ?? 0;
    const wanted = offset + (op.limit ?? 10);
    if (op.query) {
      const floor =
        this.options.minRelevance === undefined ? {} : { min_relevance: this.options.minRelevance };
      const { results } = await this.client.recall({
        cue: op.query,
        strategies: ['similarity'],
        top_k: wanted,
        filter,
        ...floor,
      });
      return results.slice(offset).map((h) => ({ ...toItem(h.memory), score: h.relevance }));
    }
    const items: SearchItem[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.client.list({
        filter: JSON.stringify(filter),
        limit: Math.min(PAGE, wanted - items.length),
        ...(cursor ? { cursor } : {}),
      });
      items.push(...page.memories.map(toItem));
      cursor = page.next_cursor;
    } while (cursor && items.length < wanted);
    return items.slice(offset, wanted);
  }

  async #listNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    let namespaces = (await this.client.entities()).map(decodeNamespace);
    namespaces = namespaces.filter((ns) => (op.matchConditions ?? []).every((c) => matches(ns, c)));
    if (op.maxDepth !== undefined) namespaces = namespaces.map((ns) => ns.slice(0, op.maxDepth));
    const unique = [...new Map(namespaces.map((ns) => [JSON.stringify(ns), ns])).values()];
    unique.sort((a, b) => compareNamespaces(a, b));
    return unique.slice(op.offset, op.offset + op.limit);
  }
}

function compareNamespaces(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}
