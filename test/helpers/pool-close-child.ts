/**
 * Run as a child process by embedding-pool.test.ts: closes the real model's pool while batches are
 * running (a first text is answered, and the queue behind it keeps two batches in the worker), so
 * a close that ended the worker mid-run would abort this process. Prints how the texts ended.
 */
import { DEFAULTS } from '../../src/config/index.ts';
import { createEmbeddingPool } from '../../src/embedding/pool.ts';

const pool = await createEmbeddingPool({
  modelDir: DEFAULTS.FLASHBULB_MODEL_DIR,
  workers: 1,
  threads: 2,
  maxBatch: 4,
  cacheSize: 0,
  maxQueued: 1000,
});
const texts = Array.from(
  { length: 40 },
  (_, i) =>
    `sentence ${i} about the lighthouse and the tide that turns at dawn, and the boats ${i}`,
);
const first = pool.embed(['the first text, answered before the close']);
const rest = texts.map((t) =>
  pool.embed([t]).then(
    () => 'embedded',
    (e: Error) => e.message,
  ),
);
await first;
await pool.close();
const outcomes = await Promise.all(rest);
const late = await pool.embed(['after the close']).then(
  () => 'embedded',
  (e: Error) => e.message,
);
const counts: Record<string, number> = {};
for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
console.log(JSON.stringify({ counts, late }));
