/**
 * In-process Flashbulb for tests: a fresh temp data dir, the hash embedder, REST on port 0.
 * `req()` is a tiny fetch wrapper that sends JSON and the admin key over a socket; `inject()` sends
 * the same request without one (helpers/inject.ts), for tests of a route's contract.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type RunningApp, type StartOptions } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { inject, type Reply, type RequestOptions } from './inject.ts';

export interface TestApp {
  app: RunningApp;
  dataDir: string;
  base: string;
  adminKey: string;
  config: Config;
  req: (method: string, path: string, opts?: RequestOptions) => Promise<Reply>;
  /** As `req`, in-process: no socket, so none of the listener's work (helpers/inject.ts). */
  inject: (method: string, path: string, opts?: RequestOptions) => Promise<Reply>;
  restart: (overrides?: Partial<Config>) => Promise<void>;
  stop: () => Promise<void>;
}

/** `opts.clock`: the router's clock (rate limits, the reflection scheduler), e.g. a ManualClock. */
export async function startTestApp(
  overrides: Partial<Config> = {},
  env: Record<string, string> = {},
  opts: StartOptions = {},
): Promise<TestApp> {
  const dataDir = overrides.dataDir ?? mkdtempSync(join(tmpdir(), 'flashbulb-test-'));
  const config = loadConfig(
    {
      FLASHBULB_EMBEDDER: 'hash',
      FLASHBULB_HTTP_PORT: '0',
      FLASHBULB_GRPC_PORT: '0',
      FLASHBULB_BIND: '127.0.0.1',
      FLASHBULB_SHARDS: '2',
      // Background reflection and contradiction checks write on their own schedule; tests that
      // exercise them turn them on.
      FLASHBULB_REFLECT_ENABLED: 'false',
      FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
      ...env,
    },
    { dataDir, ...overrides },
  );
  const t = {} as TestApp;
  const boot = async (cfg: Config): Promise<void> => {
    t.app = await startApp(cfg, { ...opts, log: opts.log ?? (() => {}) });
    t.base = `http://127.0.0.1:${t.app.httpPort}`;
    t.config = cfg;
  };
  await boot(config);
  t.dataDir = dataDir;
  t.adminKey = t.app.createdAdminKey ?? '';
  t.req = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? t.adminKey : opts.key;
    if (key) headers['authorization'] = `Bearer ${key}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${t.base}${path}`, { method, headers, body: body ?? null });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as any, headers: res.headers, text };
  };
  t.inject = (method, path, opts = {}) =>
    inject(t.app.svc, method, path, {
      ...opts,
      key: opts.key === undefined ? t.adminKey : opts.key,
    });
  t.restart = async (more = {}) => {
    await t.app.stop();
    await boot({ ...t.config, ...more });
  };
  t.stop = async () => {
    await t.app.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return t;
}
