/** @module native-bench/suite/ops/names — the measured operations, in the order the suite runs them. */

/** forget runs last: it consumes stored ids that the other operations read. */
export const OP_NAMES = [
  'remember',
  'get',
  'recall_similarity',
  'recall_temporal',
  'recall_causal',
  'recall_analogical',
  'recall_multi',
  'recall_cached',
  'prime',
  'revise',
  'subscribe_push',
  'subscribe_push_10_open',
  'subscribe_push_100_open',
  'write_push_100_open',
  'subscribe_first_push',
  'forget',
] as const;

export type OpName = (typeof OP_NAMES)[number];

export function isOpName(s: string): s is OpName {
  return (OP_NAMES as readonly string[]).includes(s);
}
