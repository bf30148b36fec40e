/**
 * @module native-bench/suite/ops — builds a measured operation by name for one driver: a
 * closed-loop Operation plus what must be released after the phase (subscriptions).
 */
import type { Operation } from '../../lib/closed-loop.ts';
import type { Dataset } from '../dataset.ts';
import type { Driver } from '../driver.ts';
import { forgetOp, getOp, rememberOp, reviseOp } from './memory.ts';
import type { OpName } from './names.ts';
import { primeOp, recallOp } from './recall.ts';
import { PushProbes } from './subscribe.ts';

export interface PreparedOp {
  run: Operation;
  dispose(): Promise<void>;
}

const nothing = async (): Promise<void> => undefined;

function simpleOp(name: Exclude<OpName, 'subscribe_push'>, d: Driver, ds: Dataset): Operation {
  switch (name) {
    case 'remember':
      return rememberOp(d, ds);
    case 'get':
      return getOp(d, ds);
    case 'revise':
      return reviseOp(d, ds);
    case 'forget':
      return forgetOp(d, ds);
    case 'prime':
      return primeOp(d, ds);
    case 'recall_similarity':
      return recallOp(d, ds, 'similarity');
    case 'recall_temporal':
      return recallOp(d, ds, 'temporal');
    case 'recall_causal':
      return recallOp(d, ds, 'causal');
    case 'recall_analogical':
      return recallOp(d, ds, 'analogical');
    case 'recall_multi':
      return recallOp(d, ds, 'multi');
    case 'recall_cached':
      return recallOp(d, ds, 'cached');
  }
}

/** `clients` is the phase's concurrency: subscribe_push opens one subscription per client. */
export async function prepareOp(name: OpName, d: Driver, opts: { ds: Dataset; clients: number }): Promise<PreparedOp> {
  if (name !== 'subscribe_push') return { run: simpleOp(name, d, opts.ds), dispose: nothing };
  const probes = await PushProbes.open(d, opts.ds, opts.clients);
  return { run: probes.op, dispose: () => probes.close() };
}

export { OP_NAMES, isOpName, type OpName } from './names.ts';
