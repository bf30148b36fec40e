/**
 * @module native-bench/run — `npm run bench`: the REST load benchmark, then the restart benchmark,
 * each in its own process with its default flags (run the scripts directly to pass flags).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPTS = ['rest-load.ts', 'restart.ts'];

for (const script of SCRIPTS) {
  const path = fileURLToPath(new URL(script, import.meta.url));
  console.log(`\n=== ${script} ===`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', path], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
