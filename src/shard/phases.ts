/**
 * @module shard/phases — the lifecycle of one shard in its thread, as one union and the moves
 * between its states (model/lifecycle; ARCHITECTURE.md draws it): recovering until its storage
 * is read, then serving; memory full while its heap watch refuses writes that grow the store;
 * log failed once its log latched a failure (it refuses every request until the router restarts
 * it); draining once asked to stop (in-flight requests finish, the final snapshot); stopped.
 */
import type { Transitions } from '../model/lifecycle.ts';

export type ShardPhase =
  | 'recovering'
  | 'serving'
  | 'memory-full'
  | 'log-failed'
  | 'draining'
  | 'stopped';

export const SHARD_TRANSITIONS: Transitions<ShardPhase> = {
  recovering: ['serving'],
  serving: ['memory-full', 'log-failed', 'draining'],
  'memory-full': ['serving', 'log-failed', 'draining'],
  'log-failed': ['draining'],
  draining: ['stopped'],
  stopped: [],
};

/** Entered without a line of the shard's own: the router logs a start, a stop and a full heap. */
export const SHARD_ROUTINE: readonly ShardPhase[] = [
  'serving',
  'memory-full',
  'draining',
  'stopped',
];
