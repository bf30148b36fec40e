/**
 * @module native-bench/suite/options — the suite's command line: tier, protocols, concurrency,
 * embedder, and the knobs a profile run needs (phase list, duration, server node flags).
 */
import { parseArgs } from 'node:util';
import { listFlag, numberFlag, stringFlag } from '../lib/args.ts';
import { isOpName, OP_NAMES, type OpName } from './ops/names.ts';

export type Tier = 'quick' | 'standard' | 'full';
export type Protocol = 'rest' | 'grpc';
export type EmbedderKind = 'model' | 'hash';

/** What a tier fixes: the dataset size and how long each measured phase runs. */
export interface TierSpec {
  memories: number;
  durationS: number;
  warmupS: number;
  /** Longest wait for an idle machine before a phase. */
  quietLimitS: number;
}

export const TIERS: Readonly<Record<Tier, TierSpec>> = {
  quick: { memories: 10_000, durationS: 3, warmupS: 1, quietLimitS: 10 },
  standard: { memories: 100_000, durationS: 5, warmupS: 1, quietLimitS: 30 },
  full: { memories: 1_000_000, durationS: 10, warmupS: 2, quietLimitS: 60 },
};

export interface SuiteOptions {
  tier: Tier;
  spec: TierSpec;
  protocols: Protocol[];
  concurrency: number;
  embedder: EmbedderKind;
  ops: OpName[];
  json: string | undefined;
  seed: number;
  loadConcurrency: number;
  cpuProfDir: string | undefined;
  cli: string | undefined;
  skipRestart: boolean;
  /** Re-measure a phase this many times when other processes disturbed it. */
  busyRetries: number;
  verbose: boolean;
}

const FLAGS = {
  tier: { type: 'string' },
  json: { type: 'string' },
  protocol: { type: 'string' },
  concurrency: { type: 'string' },
  embedder: { type: 'string' },
  ops: { type: 'string' },
  memories: { type: 'string' },
  'duration-s': { type: 'string' },
  seed: { type: 'string' },
  'load-concurrency': { type: 'string' },
  'cpu-prof-dir': { type: 'string' },
  cli: { type: 'string' },
  'skip-restart': { type: 'boolean' },
  'quiet-wait-s': { type: 'string' },
  'busy-retries': { type: 'string' },
  verbose: { type: 'boolean' },
} as const;

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  const hit = allowed.find((a) => a === value);
  if (hit === undefined)
    throw new Error(`--${name} must be one of ${allowed.join(', ')}, got '${value}'`);
  return hit;
}

export function parseOptions(argv: string[]): SuiteOptions {
  const { values } = parseArgs({ args: argv, options: FLAGS });
  const tier = oneOf('tier', stringFlag(values, 'tier') ?? 'quick', [
    'quick',
    'standard',
    'full',
  ] as const);
  const protocol = oneOf('protocol', stringFlag(values, 'protocol') ?? 'both', [
    'rest',
    'grpc',
    'both',
  ] as const);
  const ops = listFlag(values, 'ops', OP_NAMES);
  const bad = ops.find((o) => !isOpName(o));
  if (bad !== undefined) throw new Error(`unknown operation '${bad}'; use ${OP_NAMES.join(', ')}`);
  const base = TIERS[tier];
  const spec: TierSpec = {
    ...base,
    memories: numberFlag(values, 'memories', base.memories),
    durationS: numberFlag(values, 'duration-s', base.durationS),
    quietLimitS: numberFlag(values, 'quiet-wait-s', base.quietLimitS),
  };
  return {
    tier,
    spec,
    protocols: protocol === 'both' ? ['rest', 'grpc'] : [protocol],
    concurrency: Math.max(1, numberFlag(values, 'concurrency', 32)),
    embedder: oneOf('embedder', stringFlag(values, 'embedder') ?? 'model', [
      'model',
      'hash',
    ] as const),
    ops: ops.filter(isOpName),
    json: stringFlag(values, 'json'),
    seed: numberFlag(values, 'seed', 42),
    loadConcurrency: Math.max(1, numberFlag(values, 'load-concurrency', 32)),
    cpuProfDir: stringFlag(values, 'cpu-prof-dir'),
    cli: stringFlag(values, 'cli'),
    skipRestart: values['skip-restart'] === true,
    busyRetries: numberFlag(values, 'busy-retries', 1),
    verbose: values.verbose === true,
  };
}
