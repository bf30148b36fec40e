/**
 * The CLI's commands that call a running server (cli/remote) when no server answers: they fail
 * with a message naming the address and what to do, not with undici's bare `TypeError: fetch
 * failed`, which the CLI prints as a bug's stack trace.
 */
import { createServer } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { backupCommand, exportCommand, importCommand } from '../../src/cli/remote.ts';

/** An address nothing listens on: a port the system gave out and that was closed again. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe('the CLI against a server that is not running', () => {
  it('export, import and backup say the server cannot be reached, and where', async () => {
    const serverUrl = await deadUrl();
    const t = { config: { serverUrl, apiKey: 'fb_live_x' }, workspace: undefined };
    const stdin = new PassThrough();
    stdin.end('{"memory":{"content":"x"}}\n');
    const io = { stdin, stdout: new PassThrough(), stderr: new PassThrough() };
    for (const run of [
      () => exportCommand({ ...t, embeddings: false }, io),
      () => importCommand(t, io),
      () => backupCommand({ ...t, to: '/tmp/nowhere' }),
    ]) {
      const err = await run().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(TypeError);
      expect((err as Error).message).toBe(
        `cannot reach Flashbulb at ${serverUrl} (ECONNREFUSED): start it (flashbulb serve), or point --url or FLASHBULB_URL at it`,
      );
    }
  });
});
