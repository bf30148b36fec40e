/**
 * The embedding pool with the real model: a worker idle for `idleMs` exits (its model's memory
 * and threads go with it) and the next embedding starts one again with the same vectors; texts
 * embedded together in one batch get the vectors they get alone (float noise only); closing the
 * pool while the model runs lets the running batches finish instead of aborting the process.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/index.ts';
import { createEmbeddingPool } from '../../src/embedding/pool.ts';
import { until } from '../helpers/wait.ts';

const MODEL_DIR = DEFAULTS.FLASHBULB_MODEL_DIR;

const threads = (): number =>
  Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let k = 0; k < a.length; k++) dot += (a[k] ?? 0) * (b[k] ?? 0);
  return dot;
}

describe('embedding pool', () => {
  it('with workers started on demand, checks the model at start in a child process: the server thread count is unchanged, a bad model fails the start', async () => {
    const before = threads();
    const rssBefore = process.memoryUsage().rss;
    const pool = await createEmbeddingPool({
      modelDir: MODEL_DIR,
      workers: 1,
      threads: 2,
      maxBatch: 32,
      cacheSize: 0,
      maxQueued: 64,
      idleMs: 60_000,
    });
    expect(pool.dim).toBe(384);
    // No worker thread and no ONNX Runtime threads were started in this process for the check,
    // and the model's ~175 MB (which a thread that loaded it leaves in the allocator) never came.
    expect(threads()).toBeLessThanOrEqual(before + 1);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(30 * 1024 * 1024); // loaded in a worker thread here: +56 MB
    const empty = mkdtempSync(join(tmpdir(), 'flashbulb-no-model-'));
    try {
      writeFileSync(join(empty, 'model.onnx'), 'not a model');
      await expect(
        createEmbeddingPool({
          modelDir: empty,
          workers: 1,
          threads: 1,
          maxBatch: 32,
          cacheSize: 0,
          maxQueued: 64,
          idleMs: 60_000,
        }),
      ).rejects.toThrow(/cannot load the embedding model/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('stops an idle worker and starts it again for the next embedding, with the same vectors', async () => {
    const before = threads();
    const pool = await createEmbeddingPool({
      modelDir: MODEL_DIR,
      workers: 1,
      threads: 2,
      maxBatch: 32,
      cacheSize: 0,
      maxQueued: 64,
      idleMs: 300,
    });
    try {
      const first = await pool.embed([
        'The marathon starts at 7 a.m. near the city harbor on Sunday.',
      ]);
      const loaded = threads();
      expect(loaded).toBeGreaterThan(before);
      // The worker thread and ONNX Runtime's intra-op thread go once it has been idle.
      await until(() => threads() < loaded, {
        what: 'the idle worker to exit',
        deadlineMs: 15_000,
        everyMs: 50,
      });
      const again = await pool.embed([
        'The marathon starts at 7 a.m. near the city harbor on Sunday.',
      ]);
      expect(cosine(first, again)).toBeGreaterThan(0.99999);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('embeds texts queued together in one batch as it embeds them alone', async () => {
    const pool = await createEmbeddingPool({
      modelDir: MODEL_DIR,
      workers: 1,
      threads: 2,
      maxBatch: 32,
      cacheSize: 0,
      maxQueued: 64,
    });
    try {
      const texts = [
        'Mark prefers his coffee black with no sugar.',
        'The office printer jams whenever you use thick cardstock.',
        'Photosynthesis turns sunlight, water and carbon dioxide into sugar and oxygen, which is how plants make their food from light.',
        'Jupiter is the largest planet.',
        'The babysitter charges twenty dollars per hour on weekends, and thirty on public holidays.',
      ];
      const together = await Promise.all(texts.map((t) => pool.embed([t])));
      for (const [i, t] of texts.entries()) {
        const alone = await pool.embed([`${t}`]);
        expect(cosine(together[i] as Float32Array, alone)).toBeGreaterThan(0.9999);
      }
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('closes while batches are running without taking the process down: running texts finish, waiting ones are refused', () => {
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '../helpers/pool-close-child.ts')],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(child.stderr).not.toContain('terminate called');
    expect(child.status).toBe(0);
    const out = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}') as {
      counts: Record<string, number>;
      late: string;
    };
    // Some texts were in the worker when the pool closed and got their vectors; the rest are refused.
    expect(out.counts['embedded'] ?? 0).toBeGreaterThan(0);
    expect(out.counts['the server is shutting down'] ?? 0).toBeGreaterThan(0);
    expect(Object.keys(out.counts).sort()).toEqual(['embedded', 'the server is shutting down']);
    expect(out.late).toBe('the server is shutting down');
  });
});
