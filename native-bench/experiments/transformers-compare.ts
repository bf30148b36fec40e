/**
 * @module native-bench/experiments/transformers-compare — the design card's @huggingface/transformers
 * feature-extraction pipeline (`pooling: 'mean', normalize: true`) against Flashbulb's direct path
 * (onnxruntime-node and @huggingface/tokenizers called by `src/embedding/onnx-embedder.ts`) on the
 * very same ONNX file (`<model-dir>/model.onnx`, int8 weights; the library is pointed at it with
 * `subfolder: ''` and `dtype: 'fp32'`, whose file-name suffix is empty) and the same session options
 * (CPU provider, graph optimisation 'all', sequential, spinning off, 1 or 2 intra-op threads).
 * Each path runs in its own child process (the library pins its own onnxruntime-node, whose
 * libonnxruntime.so.1 would clash with ours in one process), the paths alternating, `--rounds`
 * times per thread count: CPU time of the whole process (all threads, `process.cpuUsage`) per
 * sentence in calls of 1, 8 and 32 LoCoMo turns, wall p50 of one turn at a time (one client),
 * RSS after loading and peak (VmHWM), and how far the vectors of `--agree` turns (in calls of 32)
 * are apart. Two more rows separate the library's own cost from the way a call is cut into model
 * runs: the direct path padding each call to its longest turn in one run, as the pipeline does, and
 * the pipeline fed the embedder's runs (`embedding/padding.ts` in front of it), which is what
 * adopting the library would have to look like. The library is not a dependency:
 * install it elsewhere, e.g. `npm install --prefix /work/tfjs --ignore-scripts @huggingface/transformers@3.8.1`
 * (its install script only fetches GPU builds of onnxruntime-node).
 *
 *   node --import tsx native-bench/experiments/transformers-compare.ts --transformers-dir /work/tfjs
 *     [--model-dir DIR (default: the server's model)] [--data ../shared/data/locomo-dev.json (or ../../shared)]
 *     [--threads 1,2] [--rounds 3] [--sentences 256] [--latency 150] [--agree 300]
 */
import { DEFAULTS } from '../../src/config/index.ts';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listFlag, numberFlag, stringFlag } from '../lib/args.ts';
import { Rng } from '../lib/prng.ts';
import { formatMarkdown, type Cell } from '../lib/table.ts';
import { type Kind, statusKb, openEmbedder } from './transformers-embedders.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = fileURLToPath(import.meta.url);
const BATCHES = [1, 8, 32] as const;
const KINDS: readonly Kind[] = ['direct', 'direct-padded', 'transformers', 'transformers-cut'];
const LABEL: Record<Kind, string> = {
  direct: 'direct (onnx-embedder.ts as shipped: runs ≤ 8 within 1.15× padding)',
  'direct-padded': 'direct, each call one run padded to its longest',
  transformers: '@huggingface/transformers pipeline, each call as it comes',
  'transformers-cut': "the pipeline fed the embedder's runs (padding.ts in front)",
};

interface ChildResult {
  kind: Kind;
  threads: number;
  loadMs: number;
  p50Ms: number;
  perCpuS: Record<string, number>;
  peakRssMb: number;
  rssAfterLoadMb: number;
  load1: number;
}

/** Every turn text of the LoCoMo file, deduplicated, in a seeded order. */
function locomoTurns(path: string): string[] {
  const data: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(data)) throw new Error(`${path}: not a LoCoMo array`);
  const seen = new Set<string>();
  for (const sample of data as unknown[]) {
    const conv = (sample as { conversation?: Record<string, unknown> }).conversation ?? {};
    for (const [key, session] of Object.entries(conv)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(session)) continue;
      for (const turn of session as unknown[]) {
        const text = (turn as { text?: unknown }).text;
        if (typeof text === 'string' && text.trim() !== '') seen.add(text);
      }
    }
  }
  const all = [...seen].sort();
  const rng = new Rng(26);
  for (let i = all.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [all[i], all[j]] = [all[j] as string, all[i] as string];
  }
  return all;
}

function cpuS(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1e6;
}

async function child(
  kind: Kind,
  threads: number,
  o: {
    modelDir: string;
    libDir: string;
    data: string;
    sentences: number;
    latency: number;
    agree: number;
    agreeOut: string | undefined;
  },
): Promise<void> {
  const turns = locomoTurns(o.data);
  const t0 = performance.now();
  const { embed, close } = await openEmbedder(kind, o.modelDir, threads, o.libDir);
  const loadMs = performance.now() - t0;
  const rssAfterLoadMb = statusKb('VmRSS') / 1024;
  const pick = (from: number, n: number): string[] =>
    Array.from({ length: n }, (_, i) => turns[(from + i) % turns.length] as string);
  for (const t of pick(5000, 10)) await embed([t]);

  const ms: number[] = [];
  for (const t of pick(1000, o.latency)) {
    const s = performance.now();
    await embed([t]);
    ms.push(performance.now() - s);
  }
  ms.sort((a, b) => a - b);

  const perCpuS: Record<string, number> = {};
  const texts = pick(2000, o.sentences);
  for (const b of BATCHES) {
    await embed(texts.slice(0, b));
    const c0 = process.cpuUsage();
    for (let i = 0; i + b <= texts.length; i += b) await embed(texts.slice(i, i + b));
    perCpuS[String(b)] = (Math.floor(texts.length / b) * b) / cpuS(c0);
  }

  if (o.agreeOut !== undefined) {
    const all = pick(0, o.agree);
    const parts: Float32Array[] = [];
    for (let i = 0; i < all.length; i += 32)
      parts.push(Float32Array.from(await embed(all.slice(i, i + 32))));
    const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    writeFileSync(o.agreeOut, out);
  }
  await close();
  const result: ChildResult = {
    kind,
    threads,
    loadMs,
    p50Ms: ms[Math.floor(ms.length / 2)] ?? 0,
    perCpuS,
    peakRssMb: statusKb('VmHWM') / 1024,
    rssAfterLoadMb,
    load1: loadavg()[0] ?? 0,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function runChild(args: string[]): Promise<ChildResult> {
  return new Promise((ok, fail) => {
    const p = spawn(process.execPath, [...process.execArgv, SCRIPT, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', fail);
    p.on('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{'))
        fail(new Error(`child ${args.join(' ')} exited ${String(code)}: ${out}`));
      else ok(JSON.parse(line) as ChildResult);
    });
  });
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
}

function spread(xs: readonly number[], digits: number): string {
  return `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
}

function agreement(
  a: Float32Array,
  b: Float32Array,
  dim: number,
): { maxAbs: number; minCos: number } {
  let maxAbs = 0;
  let minCos = 1;
  for (let r = 0; r * dim < a.length; r++) {
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let k = r * dim; k < (r + 1) * dim; k++) {
      const x = a[k] ?? 0;
      const y = b[k] ?? 0;
      maxAbs = Math.max(maxAbs, Math.abs(x - y));
      dot += x * y;
      na += x * x;
      nb += y * y;
    }
    minCos = Math.min(minCos, dot / Math.sqrt(na * nb));
  }
  return { maxAbs, minCos };
}

function version(dir: string, pkg: string): string {
  try {
    const path = createRequire(join(dir, 'package.json')).resolve(`${pkg}/package.json`);
    return (JSON.parse(readFileSync(path, 'utf8')) as { version?: string }).version ?? '?';
  } catch {
    // Packages whose exports hide package.json: find it above the resolved entry.
    let d = dirname(createRequire(join(dir, 'package.json')).resolve(pkg));
    while (!existsSync(join(d, 'package.json'))) d = dirname(d);
    return (
      (JSON.parse(readFileSync(join(d, 'package.json'), 'utf8')) as { version?: string }).version ??
      '?'
    );
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      'transformers-dir': { type: 'string' },
      'model-dir': { type: 'string' },
      data: { type: 'string' },
      threads: { type: 'string' },
      rounds: { type: 'string' },
      sentences: { type: 'string' },
      latency: { type: 'string' },
      agree: { type: 'string' },
      child: { type: 'string' },
      'agree-out': { type: 'string' },
    },
  });
  const libDir = stringFlag(values, 'transformers-dir');
  if (libDir === undefined)
    throw new Error(
      '--transformers-dir DIR is required (where @huggingface/transformers is installed)',
    );
  const modelDir = resolve(stringFlag(values, 'model-dir') ?? DEFAULTS.FLASHBULB_MODEL_DIR);
  const data = resolve(
    stringFlag(values, 'data') ??
      ['../shared', '../../shared']
        .map((d) => join(REPO, d, 'data/locomo-dev.json'))
        .find((p) => existsSync(p)) ??
      'locomo-dev.json',
  );
  const sentences = numberFlag(values, 'sentences', 256);
  const latency = numberFlag(values, 'latency', 150);
  const agree = numberFlag(values, 'agree', 300);
  const threadCounts = listFlag(values, 'threads', ['1', '2']).map(Number);
  const rounds = numberFlag(values, 'rounds', 3);

  const childKind = stringFlag(values, 'child');
  if (childKind !== undefined) {
    if (!(KINDS as readonly string[]).includes(childKind)) throw new Error(`--child ${childKind}?`);
    await child(childKind as Kind, threadCounts[0] ?? 1, {
      modelDir,
      libDir,
      data,
      sentences,
      latency,
      agree,
      agreeOut: stringFlag(values, 'agree-out'),
    });
    return;
  }
  if (!existsSync(data)) throw new Error(`${data}: no LoCoMo file (--data)`);

  const tmp = mkdtempSync(join(tmpdir(), 'fb-transformers-compare-'));
  const results: ChildResult[] = [];
  const loads: number[] = [];
  try {
    const common = [
      '--transformers-dir',
      libDir,
      '--model-dir',
      modelDir,
      '--data',
      data,
      '--sentences',
      String(sentences),
      '--latency',
      String(latency),
      '--agree',
      String(agree),
    ];
    for (let r = 0; r < rounds; r++) {
      for (const threads of threadCounts) {
        // Alternate the order each round so neither path always runs first.
        const order = r % 2 === 0 ? KINDS : [...KINDS].reverse();
        for (const kind of order) {
          const agreeArgs =
            r === 0 && threads === threadCounts[0] ? ['--agree-out', join(tmp, `${kind}.f32`)] : [];
          const res = await runChild([
            ...common,
            '--child',
            kind,
            '--threads',
            String(threads),
            ...agreeArgs,
          ]);
          results.push(res);
          loads.push(res.load1);
          console.error(
            `round ${r + 1} ${kind} ${threads}t: p50 ${res.p50Ms.toFixed(2)} ms, per CPU-s ${BATCHES.map((b) => (res.perCpuS[String(b)] ?? 0).toFixed(1)).join(' / ')}, peak RSS ${res.peakRssMb.toFixed(0)} MB, load ${res.load1.toFixed(2)}`,
          );
        }
      }
    }
    const read = (k: Kind): Float32Array => {
      const b = readFileSync(join(tmp, `${k}.f32`));
      return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
    };
    const vs = agreement(read('direct'), read('transformers'), 384);
    const vp = agreement(read('direct-padded'), read('transformers'), 384);
    const vc = agreement(read('direct'), read('transformers-cut'), 384);

    const rows: Cell[][] = [];
    for (const threads of threadCounts) {
      for (const kind of KINDS) {
        const rs = results.filter((x) => x.kind === kind && x.threads === threads);
        rows.push([
          `${LABEL[kind]}, ${threads} thread${threads > 1 ? 's' : ''}`,
          ...BATCHES.map((b) =>
            spread(
              rs.map((x) => x.perCpuS[String(b)] ?? 0),
              1,
            ),
          ),
          spread(
            rs.map((x) => x.p50Ms),
            2,
          ),
          spread(
            rs.map((x) => x.rssAfterLoadMb),
            0,
          ),
          spread(
            rs.map((x) => x.peakRssMb),
            0,
          ),
        ]);
      }
    }
    const tfVersion = version(libDir, '@huggingface/transformers');
    const tfOrt = version(
      dirname(createRequire(join(libDir, 'package.json')).resolve('@huggingface/transformers')),
      'onnxruntime-node',
    );
    console.log(
      formatMarkdown(
        [
          'path',
          'sentences per CPU-s, calls of 1',
          'calls of 8',
          'calls of 32',
          'p50 ms, one turn at a time',
          'RSS after load MB',
          'peak RSS MB',
        ],
        rows,
      ),
    );
    console.log('');
    console.log(
      `Median (min–max) of ${rounds} alternating rounds; ${sentences} LoCoMo turns per call size, ${latency} for the p50; load average (1 min) during the runs ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}.`,
    );
    console.log(
      `Vectors of ${agree} turns in calls of 32: direct vs pipeline max |Δ| ${vs.maxAbs.toExponential(2)}, min cosine ${vs.minCos.toFixed(7)}; direct padded vs pipeline max |Δ| ${vp.maxAbs.toExponential(2)}, min cosine ${vp.minCos.toFixed(7)}; direct vs pipeline behind padding.ts max |Δ| ${vc.maxAbs.toExponential(2)}, min cosine ${vc.minCos.toFixed(7)}.`,
    );
    console.log(
      `@huggingface/transformers ${tfVersion} (onnxruntime-node ${tfOrt}); direct path onnxruntime-node ${version(REPO, 'onnxruntime-node')}, @huggingface/tokenizers ${version(REPO, '@huggingface/tokenizers')}; model ${join(modelDir, 'model.onnx')} (sha256 ${execFileSync(
        'sha256sum',
        [join(modelDir, 'model.onnx')],
      )
        .toString()
        .slice(0, 12)}…) for both.`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
