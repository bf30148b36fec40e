/**
 * @module native-bench/suite/ops — builds a measured operation by name for one driver: a
 * closed-loop Operation plus what must be released after the phase (subscriptions).
 */
import type { Operation } from '../../lib/closed-loop.ts';
import type { Dataset } from './dataset.ts';
import type { Driver } from './driver.ts';
import { forgetOp, getOp, rememberOp, reviseOp } from './memory.ts';
import type { OpName } from './names.ts';
import { primeOp, recallOp } from './recall.ts';
import { firstPushOp, PushProbes } from './subscribe.ts';

export interface PreparedOp {
  run: Operation;
  dispose(): Promise<void>;
}

const nothing = async (): Promise<void> => undefined;

type PushOpName =
  | 'subscribe_push'
  | 'subscribe_push_10_open'
  | 'subscribe_push_100_open'
  | 'write_push_100_open'
  | 'subscribe_first_push';

/** Subscriptions each push operation keeps open in the workspace (its clients' included). */
const PUSH_OPS: Readonly<Record<PushOpName, { open: number; kind: 'feed' | 'write' | 'first' }>> = {
  subscribe_push: { open: 0, kind: 'feed' },
  subscribe_push_10_open: { open: 10, kind: 'feed' },
  subscribe_push_100_open: { open: 100, kind: 'feed' },
  write_push_100_open: { open: 100, kind: 'write' },
  subscribe_first_push: { open: 0, kind: 'first' },
};

function isPushOp(name: OpName): name is PushOpName {
  return name in PUSH_OPS;
}

function simpleOp(name: Exclude<OpName, PushOpName>, d: Driver, ds: Dataset): Operation {
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

/**
 * `clients` is the phase's concurrency: the push operations open one subscription per client, and
 * idle ones up to their open count.
 */
export async function prepareOp(
  name: OpName,
  d: Driver,
  opts: { ds: Dataset; clients: number },
): Promise<PreparedOp> {
  if (!isPushOp(name)) return { run: simpleOp(name, d, opts.ds), dispose: nothing };
  const { open, kind } = PUSH_OPS[name];
  if (kind === 'first') return { run: firstPushOp(d, opts.ds), dispose: nothing };
  const probes = await PushProbes.open(d, opts.ds, opts.clients, Math.max(open, opts.clients));
  return { run: kind === 'feed' ? probes.feedOp : probes.writeOp, dispose: () => probes.close() };
}

/** True for the operations that hold subscriptions (at most 100 per workspace). */
export function holdsSubscriptions(name: OpName): boolean {
  return isPushOp(name);
}

export { OP_NAMES, isOpName, type OpName } from './names.ts';
