#!/usr/bin/env node
// Builds native/malloc-trim (glibc's malloc_trim for the server: src/threads/release-memory.ts) when
// its addon is missing. In a checkout, `npm ci` builds it as the optional `file:` dependency it is;
// installed from the packed tarball that dependency is a link into the package, and npm runs no
// install step for a link, so the package's own postinstall builds it here, with the node-gyp npm
// runs scripts with (the compiler that hnswlib-node needs is needed for it too). Optional: where it
// cannot be built (no compiler, not Linux) the server runs without it, and says so when it would
// have used it; this script then reports the reason and exits 0.
//
// Usage: node scripts/build-native.mjs   (npm runs it after fetch-model.mjs on install)

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'native', 'malloc-trim');
const ADDON = join(DIR, 'build', 'Release', 'malloc_trim.node');
const log = (msg) => process.stderr.write(`build-native: ${msg}\n`);

if (existsSync(ADDON)) {
  log(`malloc-trim: ok (${ADDON})`);
} else if (process.platform !== 'linux') {
  log(`malloc-trim: skipped on ${process.platform} (it is for glibc)`);
} else {
  // npm hands its scripts the path of its own node-gyp; outside npm, the one on PATH.
  const gyp = process.env.npm_config_node_gyp;
  const [cmd, args] = gyp ? [process.execPath, [gyp, 'rebuild']] : ['node-gyp', ['rebuild']];
  const r = spawnSync(cmd, args, { cwd: DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status === 0 && existsSync(ADDON)) log(`malloc-trim: built (${ADDON})`);
  else {
    const why = r.error
      ? r.error.message
      : `${(r.stderr || r.stdout || '').trim().split('\n').slice(-5).join('\n')}`;
    log(
      `malloc-trim: not built, so memory freed by the embedding model's worker is not handed back to the system (everything else works):\n${why}`,
    );
  }
}
