/**
 * SIGTERM when the final snapshot cannot be written (the fixed bug: the data directory removed
 * while the server runs made it hang on SIGTERM, its shard workers never exiting). The process
 * must end within its drain timeout plus the snapshot's, with a non-zero exit naming the failure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureBuilt,
  http as request,
  killQuietly,
  startServer,
  waitExit,
  type ChildServer,
} from '../helpers/child.ts';

const dirs: string[] = [];
const children: ChildServer[] = [];

beforeAll(() => ensureBuilt(), 120_000);
afterEach(async () => {
  for (const c of children.splice(0)) await killQuietly(c);
});
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('SIGTERM with the data directory gone', () => {
  it('exits non-zero within the shutdown timeout instead of hanging', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-lostdir-'));
    dirs.push(dataDir);
    const server = await startServer({ dataDir, env: { FLASHBULB_SHUTDOWN_TIMEOUT_S: '2' } });
    children.push(server);
    for (let i = 0; i < 20; i++)
      expect(
        (await request(server.base, 'POST', '/v1/memories', { content: `memory ${i}` })).status,
      ).toBe(201);
    rmSync(dataDir, { recursive: true, force: true });
    server.proc.kill('SIGTERM');
    // The bound is generous (a loaded machine); before the fix the process never exited.
    const exit = await waitExit(server, 20_000);
    expect(exit.signal, server.stderr()).toBeNull();
    expect(exit.code, server.stderr()).not.toBe(0);
    expect(server.stderr()).toMatch(/final snapshot/i);
    expect(server.stderr()).not.toContain('stopped cleanly');
  }, 40_000);
});
