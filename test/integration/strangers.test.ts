/**
 * A stranger cannot take the slots (issue 48, item 3), the probe's case: a stranger without a key,
 * from five loopback addresses, keeps the caps' worth of connections open (gRPC connections that
 * send only the HTTP/2 preface, REST connections that send nothing, REST keep-alive connections
 * asking without a key again and again), opening a new one whenever one is closed, while a tenant
 * keeps working over REST (a new connection for every request) and gRPC. Before, the stranger
 * filled the connection cap and the tenant got `503 too many connections`; now unauthenticated
 * connections hold only their share, must authenticate within FLASHBULB_AUTH_TIMEOUT_MS, and a
 * refused request ends its connection: every one of the tenant's requests succeeds.
 */
import http from 'node:http';
import net from 'node:net';
import { loadavg } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc, type GrpcClient } from '../helpers/grpc.ts';
import { until } from '../helpers/wait.ts';

const STRANGER_HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];
/** What each stranger address keeps open: the per-address cap's worth. */
const PER_HOST = { preface: 24, idle: 24, asking: 8 };
const H2_PREFACE = Buffer.concat([
  Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);

let t: TestApp;
let rpc: GrpcClient;
const sockets = new Set<net.Socket>();
let attacking = true;
const closedBy = { preface: 0, idle: 0, asking: 0 };

/** One stranger connection of `kind`, opened again as soon as the server closes it, while the attack lasts. */
function stranger(port: number, host: string, kind: keyof typeof PER_HOST): void {
  if (!attacking) return;
  const socket = net.connect({ host: '127.0.0.1', port, localAddress: host });
  sockets.add(socket);
  let timer: NodeJS.Timeout | undefined;
  socket.on('error', () => undefined);
  socket.resume(); // read (and drop) what the server sends, so its close is seen
  socket.once('connect', () => {
    if (kind === 'preface') socket.write(H2_PREFACE);
    if (kind === 'asking') {
      const ask = (): void => void socket.write('GET /v1/memories HTTP/1.1\r\nHost: x\r\n\r\n');
      ask();
      timer = setInterval(ask, 200);
    }
  });
  socket.once('close', () => {
    clearInterval(timer);
    sockets.delete(socket);
    closedBy[kind] += 1;
    setTimeout(() => stranger(port, host, kind), 100);
  });
}

/** A tenant request on a connection of its own (no keep-alive: a new client every time). */
function freshRequest(key: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: t.app.httpPort,
        path: '/v1/memories?limit=1',
        agent: false,
        headers: { authorization: `Bearer ${key}`, connection: 'close' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.setTimeout(10_000, () => req.destroy());
    req.end();
  });
}

beforeAll(async () => {
  t = await startTestApp(
    {},
    {
      FLASHBULB_MAX_CONNECTIONS: '128',
      FLASHBULB_MAX_CONNECTIONS_PER_CLIENT: '64',
      FLASHBULB_MAX_UNAUTHENTICATED_CONNECTIONS: '32',
      FLASHBULB_MAX_UNAUTHENTICATED_PER_CLIENT: '8',
      FLASHBULB_AUTH_TIMEOUT_MS: '1000',
      // Long, so that only the new checks can explain a connection being closed.
      FLASHBULB_HEADERS_TIMEOUT_MS: '30000',
      FLASHBULB_RATE_LIMIT_READS: '0',
    },
  );
  rpc = connectGrpc(t.app.grpcPort, { deadlineMs: 10_000 });
});
afterAll(async () => {
  attacking = false;
  for (const s of sockets) s.destroy();
  rpc?.close();
  await t.stop();
});

describe('strangers from many addresses', () => {
  it('hold only the unauthenticated share while a tenant succeeds every time, over REST and gRPC', async () => {
    for (const host of STRANGER_HOSTS) {
      for (let i = 0; i < PER_HOST.preface; i++) stranger(t.app.grpcPort, host, 'preface');
      for (let i = 0; i < PER_HOST.idle; i++) stranger(t.app.httpPort, host, 'idle');
      for (let i = 0; i < PER_HOST.asking; i++) stranger(t.app.httpPort, host, 'asking');
    }
    // The attack is under way: every kind of stranger connection has been turned away at least once.
    await until(() => closedBy.preface > 0 && closedBy.idle > 0 && closedBy.asking > 0, {
      what: 'strangers of every kind closed',
      deadlineMs: 15_000,
    });
    const outcomes: number[] = [];
    const grpcOutcomes: string[] = [];
    const started = performance.now();
    for (let i = 0; i < 20; i++) {
      outcomes.push(await freshRequest(t.adminKey));
      grpcOutcomes.push(
        await rpc
          .call(
            'MemoryService',
            'Recall',
            { cue: 'anything', strategies: [{ strategy_type: 'SIMILARITY', top_k: 1 }] },
            { key: t.adminKey },
          )
          .then(
            () => 'ok',
            (e: { code?: number }) => `code ${e.code}`,
          ),
      );
    }
    console.log(
      `strangers: the tenant's 20 REST requests (each on a new connection) and 20 gRPC calls took ${(performance.now() - started).toFixed(0)} ms with strangers closed so far: ${JSON.stringify(closedBy)} (load ${loadavg()[0]?.toFixed(1)})`,
    );
    expect(
      outcomes.filter((s) => s !== 200),
      `tenant REST statuses: ${outcomes.join(',')}`,
    ).toEqual([]);
    expect(grpcOutcomes.filter((o) => o !== 'ok')).toEqual([]);
    // Preface-only and idle connections were closed by the auth deadline (not the 30 s headers
    // timeout), and a request without a key ended its keep-alive connection.
    expect(closedBy.preface).toBeGreaterThan(STRANGER_HOSTS.length * PER_HOST.preface);
    expect(closedBy.idle).toBeGreaterThan(STRANGER_HOSTS.length * PER_HOST.idle);
    expect(closedBy.asking).toBeGreaterThan(STRANGER_HOSTS.length * PER_HOST.asking);
  }, 60_000);
});
