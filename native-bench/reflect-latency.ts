/**
 * @module native-bench/reflect-latency — POST /v1/reflect end to end on a real server: one
 * workspace per size (default 1k and 10k episodes of the seeded corpus, loaded over REST), then
 * a first reflection (clusters found, insights written and embedded) and a second one right after
 * (which refreshes instead of duplicating). Background reflection is off so only these runs count;
 * contradiction checks stay on, and the script waits for them to finish before reflecting.
 *
 *   npm run build && node --import tsx native-bench/reflect-latency.ts [--sizes 1000,10000]
 *     [--embedder model|hash] [--concurrency 32] [--cli dist/cli.js]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { listFlag, numberFlag, stringFlag } from './lib/args.ts';
import { loadMemories } from './lib/loader.ts';
import { Rng } from './lib/prng.ts';
import { waitForQuiet } from './lib/proc.ts';
import { expectJson, RestClient } from './lib/rest-client.ts';
import { freePort, startServer } from './lib/server-process.ts';
import { formatTable, type Cell } from './lib/table.ts';

interface ReflectReply {
  insights_created: number;
  insights_refreshed?: number;
  clusters_found: number;
  memories_processed: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      sizes: { type: 'string' },
      embedder: { type: 'string' },
      concurrency: { type: 'string' },
      cli: { type: 'string' },
    },
  });
  const sizes = listFlag(values, 'sizes', ['1000', '10000']).map(Number);
  const embedder = stringFlag(values, 'embedder') ?? 'model';
  const concurrency = numberFlag(values, 'concurrency', 32);
  const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-reflect-'));
  const cli = stringFlag(values, 'cli');
  const server = await startServer({
    dataDir,
    port: await freePort(),
    ...(cli === undefined ? {} : { cli }),
    env: {
      FLASHBULB_EMBEDDER: embedder,
      FLASHBULB_REFLECT_ENABLED: 'false',
      FLASHBULB_DURABILITY: 'os',
    },
  });
  const admin = new RestClient({
    host: '127.0.0.1',
    port: server.port,
    apiKey: server.apiKey,
    maxSockets: 1,
  });
  const rows: Cell[][] = [];
  try {
    for (const size of sizes) {
      const slug = `reflect-${size}`;
      const created = expectJson<{ api_key: string }>(
        await admin.post('/v1/workspaces', { slug, name: slug }),
        201,
        'create workspace',
      );
      const client = new RestClient({
        host: '127.0.0.1',
        port: server.port,
        apiKey: created.api_key,
        maxSockets: concurrency,
      });
      const load = await loadMemories(client, new Rng(size), { count: size, concurrency });
      console.error(
        `  ${slug}: ${size} episodes loaded at ${load.perS.toFixed(0)}/s; waiting for background checks`,
      );
      await waitForQuiet({ maxCores: 0.2, limitS: 300 });
      for (const run of ['first', 'again'] as const) {
        const t0 = performance.now();
        const r = expectJson<ReflectReply>(await client.post('/v1/reflect', {}), 200, 'reflect');
        const s = (performance.now() - t0) / 1000;
        rows.push([
          size,
          run,
          s,
          r.memories_processed,
          r.clusters_found,
          r.insights_created,
          r.insights_refreshed ?? 0,
        ]);
        console.error(`  ${slug} ${run}: ${s.toFixed(2)} s`);
      }
      client.close();
    }
  } finally {
    admin.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`\n## POST /v1/reflect end to end (${embedder} embedder)\n`);
  console.log(
    formatTable(
      ['episodes', 'run', 'seconds', 'processed', 'clusters', 'insights created', 'refreshed'],
      rows,
    ),
  );
  console.log(
    '\nShows: how long a whole reflection takes at 1k and 10k episodes (gather in the shard, clustering in a worker, insight writing), and that a second run refreshes instead of duplicating.',
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
