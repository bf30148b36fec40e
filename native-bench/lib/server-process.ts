/**
 * @module native-bench/lib/server-process — a real Flashbulb server (`node dist/cli.js serve`) as a
 * child process: started on a fixed free port with the hash embedder and durable acks, its admin
 * key read from stderr, readiness polled on GET /v1/health/ready, stopped with SIGTERM or SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export interface ServerOptions {
  dataDir: string;
  port: number;
  /** Path of the built CLI; default dist/cli.js. */
  cli?: string;
  /** Extra node flags for the server (e.g. --cpu-prof). */
  nodeArgs?: readonly string[];
  /** Extra or overriding FLASHBULB_* variables. */
  env?: Readonly<Record<string, string>>;
  /** Key to poll readiness with when the server prints none (a restart). */
  apiKey?: string;
  /** Echo the server's stderr. */
  verbose?: boolean;
}

export interface RunningServer {
  readonly pid: number;
  readonly port: number;
  readonly apiKey: string;
  /** Milliseconds from spawn until /v1/health/ready answered 200. */
  readonly readyMs: number;
  /** Every stderr line so far. */
  readonly log: readonly string[];
  /** SIGTERM; resolves with milliseconds until the process exited, and its exit code. */
  stop(): Promise<{ ms: number; code: number | null }>;
  /** SIGKILL; resolves once the process is gone. */
  kill(): Promise<void>;
}

const BASE_ENV = {
  FLASHBULB_EMBEDDER: 'hash',
  FLASHBULB_DURABILITY: 'fsync',
  FLASHBULB_AUTH_ENABLED: 'true',
  FLASHBULB_BIND: '127.0.0.1',
  FLASHBULB_RATE_LIMIT_WRITES: '0',
  FLASHBULB_RATE_LIMIT_READS: '0',
};
const ADMIN_KEY_RE = /\b(fb_admin_[0-9A-Za-z]+)/;
const START_TIMEOUT_MS = 120_000;

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => done(port));
    });
  });
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const started = performance.now();
  const child = spawnServer(opts);
  const log: string[] = [];
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const keyFromLog = collectLog(child, log, opts.verbose ?? false);
  let apiKey: string;
  try {
    apiKey = opts.apiKey ?? (await raceExit(keyFromLog, exited, log));
    await raceExit(waitReady(opts.port, apiKey), exited, log);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const readyMs = performance.now() - started;
  const pid = child.pid ?? -1;
  return {
    pid,
    port: opts.port,
    apiKey,
    readyMs,
    log,
    stop: async () => {
      const t0 = performance.now();
      child.kill('SIGTERM');
      const code = await exited;
      return { ms: performance.now() - t0, code };
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

function spawnServer(opts: ServerOptions): ChildProcess {
  const cli = resolve(opts.cli ?? 'dist/cli.js');
  const env = {
    ...process.env,
    ...BASE_ENV,
    FLASHBULB_DATA_DIR: opts.dataDir,
    FLASHBULB_HTTP_PORT: String(opts.port),
    FLASHBULB_GRPC_PORT: '0',
    ...opts.env,
  };
  return spawn(process.execPath, [...(opts.nodeArgs ?? []), cli, 'serve'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/** Keeps every stderr line; resolves with the first admin key printed. */
function collectLog(child: ChildProcess, log: string[], verbose: boolean): Promise<string> {
  return new Promise((found) => {
    let partial = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        log.push(line);
        if (verbose) process.stderr.write(`  [server] ${line}\n`);
        const key = ADMIN_KEY_RE.exec(line)?.[1];
        if (key) found(key);
      }
    });
  });
}

async function raceExit<T>(
  work: Promise<T>,
  exited: Promise<number | null>,
  log: readonly string[],
): Promise<T> {
  const died = exited.then((code): never => {
    throw new Error(
      `server exited with code ${code} during start-up:\n${log.slice(-20).join('\n')}`,
    );
  });
  const timeout = new Promise<never>((_, fail) => {
    setTimeout(
      () => fail(new Error(`server not ready after ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    ).unref();
  });
  return Promise.race([work, died, timeout]);
}

/** Polls GET /v1/health/ready every 2 ms until it answers 200. */
async function waitReady(port: number, apiKey: string): Promise<void> {
  for (;;) {
    if ((await probe(port, apiKey)) === 200) return;
    await new Promise((r) => setTimeout(r, 2));
  }
}

function probe(port: number, apiKey: string): Promise<number> {
  return new Promise((done) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/health/ready',
        headers: { authorization: `Bearer ${apiKey}` },
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      },
    );
    req.on('error', () => done(0));
    req.end();
  });
}
