/**
 * @module cluster/js-errors — JetStream refusals the cluster acts on.
 */
import { JetStreamApiError } from '@nats-io/jetstream';

/** JetStream API error: the expected last sequence did not hold. */
export const WRONG_LAST_SEQUENCE = 10071;
/** The same, when the server cannot tell the subject's last sequence (it refuses the expectation). */
const WRONG_LAST_SEQUENCE_UNKNOWN = 10164;

/** A publish (or KV compare-and-set) refused because the expected last sequence did not hold. */
export function isWrongLastSequence(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === WRONG_LAST_SEQUENCE || err.code === WRONG_LAST_SEQUENCE_UNKNOWN)
  );
}
