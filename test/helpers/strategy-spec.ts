/**
 * A recall strategy as the verbs hand it to the shard, with the verbs' defaults (src/verbs/recall.ts):
 * top 10, ef_search 50, no entity, window or seed, depth 3, alpha 0.5. Tests override what they vary.
 */
import type { StrategySpec } from '../../src/recall/types.ts';

export function similaritySpec(overrides: Partial<StrategySpec> = {}): StrategySpec {
  return {
    strategy: 'similarity',
    topK: 10,
    efSearch: 50,
    entityId: null,
    timeRange: null,
    seedId: null,
    edgeTypes: null,
    maxDepth: 3,
    alpha: 0.5,
    ...overrides,
  };
}
