/** @module native-bench/suite/ops/memory — remember, get, revise and forget as closed-loop operations. */
import type { Operation } from '../../lib/closed-loop.ts';
import type { Dataset } from './dataset.ts';
import type { Driver } from './driver.ts';

/** Stores a new memory of the corpus (embedding and durable ack included) and records its id. */
export function rememberOp(d: Driver, ds: Dataset): Operation {
  return async () => {
    const m = ds.nextMemory();
    ds.stored(await d.remember(m), m);
    return true;
  };
}

export function getOp(d: Driver, ds: Dataset): Operation {
  return async () => {
    await d.get(ds.pickId());
    return true;
  };
}

/** Replaces a random memory's content (the new content is embedded). */
export function reviseOp(d: Driver, ds: Dataset): Operation {
  return async () => {
    await d.revise(ds.pickMutable(), ds.cue());
    return true;
  };
}

/** Forgets one memory by id, newest first; each id is forgotten once. */
export function forgetOp(d: Driver, ds: Dataset): Operation {
  return async () => (await d.forget(ds.takeId())) === 1;
}
