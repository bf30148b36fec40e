/**
 * @module native-bench/micro/all — runs every micro-benchmark in sequence, each in its own process
 * (so one's heap and threads never disturb the next), then the worker-hop benchmark that lives in
 * native-bench/worker-hop.ts. Flags pass through: `--quick` (smaller sizes, a few minutes in all)
 * and `--max-wait-s N`.
 *
 *   node --import tsx native-bench/micro/all.ts [--quick] [--only graph,persistence]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listFlag } from '../lib/args.ts';

const SCRIPTS = [
  'embedding',
  'vector-search',
  'graph',
  'persistence',
  'reflection',
  'contradiction-overhead',
  'grpc-encode',
  'worker-hop',
];

function scriptPath(name: string): string {
  // worker-hop.ts belongs to native-bench/ itself; it is run from there, not copied.
  const rel = name === 'worker-hop' ? '../worker-hop.ts' : `./${name}.ts`;
  return fileURLToPath(new URL(rel, import.meta.url));
}

function argsFor(name: string, quick: boolean, maxWait: string | undefined): string[] {
  if (name === 'worker-hop') return quick ? ['--time-ms', '1000'] : [];
  return [
    ...(quick ? ['--quick'] : []),
    ...(maxWait === undefined ? [] : ['--max-wait-s', maxWait]),
  ];
}

function main(): void {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      quick: { type: 'boolean' },
      'max-wait-s': { type: 'string' },
      only: { type: 'string' },
    },
  });
  const quick = values.quick === true;
  const only = listFlag(values, 'only', SCRIPTS);
  const failed: string[] = [];
  for (const name of SCRIPTS.filter((s) => only.includes(s))) {
    console.log(`\n=== ${name}${quick ? ' (quick)' : ''} ===`);
    const started = Date.now();
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', scriptPath(name), ...argsFor(name, quick, values['max-wait-s'])],
      { stdio: 'inherit' },
    );
    console.log(
      `=== ${name}: ${r.status === 0 ? 'done' : `FAILED (${r.status ?? r.signal})`} in ${((Date.now() - started) / 1000).toFixed(0)} s ===`,
    );
    if (r.status !== 0) failed.push(name);
  }
  if (failed.length > 0) {
    console.error(`failed: ${failed.join(', ')}`);
    process.exit(1);
  }
}

main();
