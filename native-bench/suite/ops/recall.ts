/**
 * @module native-bench/suite/ops/recall — recall by each strategy, all four at once, a repeated
 * cue (embedding-cache hit), and prime. Every cue is a fresh sentence (so it is embedded), except
 * recall_cached's. An operation succeeds when it returns at least one result.
 */
import type { Operation } from '../../lib/closed-loop.ts';
import type { Dataset } from './dataset.ts';
import type { Driver, StrategyInput } from './driver.ts';

const TOP_K = 10;
const CAUSAL_DEPTH = 3;
/** The one cue recall_cached repeats. */
export const CACHED_CUE = 'What did the customer report about the invoice for March?';

export type RecallKind = 'similarity' | 'temporal' | 'causal' | 'analogical' | 'multi' | 'cached';

function strategies(kind: RecallKind, ds: Dataset): StrategyInput[] {
  switch (kind) {
    case 'similarity':
    case 'cached':
      return [{ strategy: 'similarity' }];
    case 'temporal':
      return [{ strategy: 'temporal', entityId: ds.pickEntity() }];
    case 'causal':
      return [{ strategy: 'causal', seedId: ds.pickLinked(), maxDepth: CAUSAL_DEPTH }];
    case 'analogical':
      return [{ strategy: 'analogical' }];
    case 'multi':
      return [
        { strategy: 'similarity' },
        { strategy: 'temporal', entityId: ds.pickEntity() },
        { strategy: 'causal', seedId: ds.pickLinked(), maxDepth: CAUSAL_DEPTH },
        { strategy: 'analogical' },
      ];
  }
}

export function recallOp(d: Driver, ds: Dataset, kind: RecallKind): Operation {
  return async () => {
    const cue = kind === 'cached' ? CACHED_CUE : ds.cue();
    return (await d.recall({ cue, topK: TOP_K, strategies: strategies(kind, ds) })) > 0;
  };
}

/** Prime: an entity's recent memories plus memories similar to a cue. */
export function primeOp(d: Driver, ds: Dataset): Operation {
  return async () =>
    (await d.prime({ entityId: ds.pickEntity(), cue: ds.cue(), maxMemories: TOP_K })) > 0;
}
