/**
 * @module threads/release-memory — hands the memory threads freed back to the system. glibc keeps
 * what a thread frees in that thread's malloc arena for reuse, and an arena shrinks only from its
 * top: after the model's worker exits, 30–100 MB of what it allocated and freed stays resident
 * (native-bench/HISTORY.md, Performance: footprint). `releaseFreedMemory` calls glibc's `malloc_trim(0)`, which
 * returns the free pages of every arena, through a twenty-line native addon
 * (native/malloc-trim, an optional dependency that `npm ci` builds; installed from the packed
 * tarball, scripts/build-native.mjs builds it). Where the addon did not build, or the C library is
 * not glibc, it does nothing and says so.
 */
import { createRequire } from 'node:module';

interface Trim {
  trim(): boolean;
}

const require = createRequire(import.meta.url);
let addon: Trim | null | undefined;

function load(): Trim | null {
  if (addon === undefined) {
    try {
      addon = require('flashbulb-malloc-trim') as Trim;
    } catch {
      addon = null;
    }
  }
  return addon;
}

/** Whether freed memory can be handed back here (the addon loaded). */
export function canReleaseMemory(): boolean {
  return load() !== null;
}

/**
 * Returns the free pages of every malloc arena to the system (the whole process, whichever thread
 * calls it); true when some went back. Costs a walk of the arenas' free lists (each locked while
 * walked): for moments when a lot was just freed, not for every request.
 */
export function releaseFreedMemory(): boolean {
  return load()?.trim() ?? false;
}
