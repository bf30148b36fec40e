/**
 * threads/release-memory: glibc's malloc_trim through native/malloc-trim. A worker thread
 * allocates ~200 MB in small blocks, frees all but a scattering of them (so its arena cannot
 * shrink from the top) and exits; the freed memory stays resident until it is released.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { canReleaseMemory, releaseFreedMemory } from '../../src/threads/release-memory.ts';

const glibc =
  process.platform === 'linux' &&
  typeof (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header
    ?.glibcVersionRuntime === 'string';
const MB = 1024 * 1024;

const FRAGMENT = `
const blocks = [];
for (let i = 0; i < 200000; i++) blocks.push(new ArrayBuffer(1000 + (i % 7) * 100));
const kept = blocks.filter((_, i) => i % 64 === 0);
blocks.length = 0;
require('node:worker_threads').parentPort.postMessage(kept.length);
`;

describe.runIf(glibc)('releaseFreedMemory (glibc)', () => {
  it('the addon is built by npm ci and loads', () => {
    expect(canReleaseMemory()).toBe(true);
  });

  it("hands back what an exited thread freed: RSS falls by most of the thread's 200 MB", async () => {
    await new Promise<void>((resolve, reject) => {
      const worker = new Worker(FRAGMENT, { eval: true });
      worker.on('error', reject);
      worker.on('exit', () => resolve());
    });
    const before = process.memoryUsage().rss;
    expect(releaseFreedMemory()).toBe(true);
    const after = process.memoryUsage().rss;
    expect(before - after).toBeGreaterThan(100 * MB);
  });
});
