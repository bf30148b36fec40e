/**
 * SIGTERM under keep-alive load (the fixed bug: keep-alive clients went on being served for more
 * than 30 s, because shutdown only closed the listening socket). The real server process drains:
 * requests after the signal get 503 `unavailable` with `Connection: close` or a connection error,
 * never a hang; open SSE subscriptions get `event: closed`; new gRPC calls get UNAVAILABLE; the
 * process exits 0; every write acknowledged with 2xx is there after a restart.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadHebbs } from '../../src/grpc/server.ts';
import {
  ensureBuilt,
  freePort,
  http as request,
  killQuietly,
  startServer,
  waitExit,
  type ChildServer,
} from '../helpers/child.ts';
import { subscribeSse } from '../helpers/sse.ts';
import { until } from '../helpers/wait.ts';

const WRITERS = 32;
/** A request that takes this long counts as hung (the server answers in milliseconds). */
const HUNG_MS = 8000;

interface Reply {
  status: number;
  connection: string | undefined;
  body: string;
}

/** One request over `agent`; resolves with the reply or the connection error's code, or 'hung'. */
function send(
  agent: http.Agent,
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Reply | string> {
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> =
    payload === undefined
      ? {}
      : {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(payload)),
        };
  return new Promise((resolve) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method, headers, agent },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: text }),
        );
        res.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      },
    );
    req.setTimeout(HUNG_MS, () => {
      resolve('hung');
      req.destroy();
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end(payload);
  });
}

interface Acked {
  id: string;
  content: string;
}

/** Writers on keep-alive connections that post until they get anything but 201. */
function writers(
  base: string,
  agent: http.Agent,
): { acked: Acked[]; last: Array<Reply | string>; done: Promise<void> } {
  const acked: Acked[] = [];
  const last: Array<Reply | string> = [];
  const one = async (w: number): Promise<void> => {
    for (let i = 0; ; i++) {
      const content = `writer ${w} write ${i} ${randomUUID()}`;
      const reply = await send(agent, base, 'POST', '/v1/memories', { content });
      if (typeof reply === 'string' || reply.status !== 201) {
        last.push(reply);
        return;
      }
      acked.push({ id: (JSON.parse(reply.body) as { memory_id: string }).memory_id, content });
    }
  };
  return {
    acked,
    last,
    done: Promise.all(Array.from({ length: WRITERS }, (_, w) => one(w))).then(() => undefined),
  };
}

/** Asks the Health service once; resolves with the gRPC status code (0 when it answered). */
function grpcCheck(client: grpc.Client): Promise<number> {
  const check = (
    client as unknown as Record<
      string,
      (req: object, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void) => void
    >
  )['Check'];
  return new Promise((resolve) =>
    check?.call(client, {}, { deadline: Date.now() + HUNG_MS }, (err) =>
      resolve(err ? err.code : 0),
    ),
  );
}

const dirs: string[] = [];
const children: ChildServer[] = [];
const agents: http.Agent[] = [];

function keepAlive(maxSockets: number): http.Agent {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  agents.push(agent);
  return agent;
}

beforeAll(() => ensureBuilt(), 120_000);
afterEach(async () => {
  for (const a of agents.splice(0)) a.destroy();
  for (const c of children.splice(0)) await killQuietly(c);
});
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('SIGTERM under keep-alive load', () => {
  it('answers 503 with Connection: close on open connections, closes streams, exits 0, and keeps every acknowledged write', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-drain-'));
    dirs.push(dataDir);
    const grpcPort = await freePort();
    const server = await startServer({ dataDir, env: { FLASHBULB_GRPC_PORT: String(grpcPort) } });
    children.push(server);

    // A keep-alive connection that stays idle during the load, to probe after the signal.
    const probe = keepAlive(1);
    expect(await send(probe, server.base, 'GET', '/v1/health/live')).toMatchObject({ status: 200 });
    const Health = loadHebbs()['HealthService'] as grpc.ServiceClientConstructor;
    const rpc = new Health(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
    expect(await grpcCheck(rpc)).toBe(0);
    const { stream } = await subscribeSse(server.base, null);

    const load = writers(server.base, keepAlive(WRITERS));
    await until(() => load.acked.length >= 100, {
      what: '100 acknowledged writes',
      deadlineMs: 30_000,
    });
    server.proc.kill('SIGTERM');

    // The probe's connection was open before the drain: once the drain starts, it is told to go.
    let reply = await send(probe, server.base, 'GET', '/v1/health/live');
    while (typeof reply !== 'string' && reply.status === 200)
      reply = await send(probe, server.base, 'GET', '/v1/health/live');
    expect(reply).toMatchObject({ status: 503, connection: 'close' });
    expect(JSON.parse((reply as Reply).body)).toEqual({
      error_code: 'unavailable',
      message: 'the server is shutting down',
    });
    expect(await grpcCheck(rpc)).toBe(grpc.status.UNAVAILABLE);
    rpc.close();

    const exit = await waitExit(server, 15_000); // generous: "exits at all", not how fast
    expect(exit, server.stderr()).toEqual({ code: 0, signal: null });
    expect(server.stderr()).toContain('stopped cleanly');
    await load.done;
    await stream.ended;
    expect(stream.named('closed').map((e) => e.json)).toEqual([{ reason: 'shutdown' }]);

    // Each writer stopped on a 503 that closes its connection or on a connection error; none hung.
    expect(load.last).toHaveLength(WRITERS);
    for (const last of load.last) {
      if (typeof last === 'string')
        expect(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'socket hang up']).toContain(last);
      else expect(last, last.body).toMatchObject({ status: 503, connection: 'close' });
    }

    const restarted = await startServer({ dataDir });
    children.push(restarted);
    const missing: string[] = [];
    for (let i = 0; i < load.acked.length; i += 500) {
      const chunk = load.acked.slice(i, i + 500);
      const res = await request(restarted.base, 'POST', '/v1/memories/batch', {
        memory_ids: chunk.map((a) => a.id),
      });
      expect(res.status).toBe(200);
      const got = new Map(
        (res.body as Array<{ memory_id: string; content: string }>).map((m) => [
          m.memory_id,
          m.content,
        ]),
      );
      for (const a of chunk) if (got.get(a.id) !== a.content) missing.push(a.id);
    }
    expect(
      missing,
      `${missing.length} of ${load.acked.length} acknowledged writes missing`,
    ).toEqual([]);
  }, 30_000);
});
