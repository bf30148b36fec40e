/**
 * The house rules on imports, enforced (ARCHITECTURE.md reproduces the table and the fences).
 * Every import in src/ and native-bench/ counts, type-only ones included (see
 * test/helpers/import-graph.ts). Each check names the offending file and import:
 * no file-level cycle, no folder-level cycle (each folder one unit, so shard/store ⇄ shard/persist
 * is a cycle even when no two files form one; each file at src/'s root is a unit of its own), the who-may-import-whom table by top-level room of
 * src/, and the library fences; no source file over 400 lines; and every file in src/ opening with
 * a one-paragraph `@module` header (what the module is and does; measurements and history live in
 * docs/architecture-notes.md and native-bench/HISTORY.md).
 */
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cyclePath, cycles, readSources, type ImportEdge } from '../helpers/import-graph.ts';

const sources = readSources(['src', 'native-bench']);
const edges = sources.flatMap((s) => s.imports);
const local = edges.filter((e): e is ImportEdge & { to: string } => e.to !== null);

/**
 * Who may import whom, by room: the first folder under src/, or the file name for the files at its
 * root (app, cli, data-dir). Arrows point down; a room not listed as a key imports nothing of ours.
 * native-bench/ may import any room; no room may import native-bench/.
 */
export const MAY_IMPORT: Record<string, readonly string[]> = {
  cli: ['app', 'auth', 'cluster', 'config', 'data-dir', 'mcp', 'router', 'verbs'],
  app: [
    'auth',
    'cluster',
    'config',
    'data-dir',
    'embedding',
    'grpc',
    'http',
    'llm',
    'metrics',
    'model',
    'protocol',
    'reflection',
    'router',
    'subscribe',
    'tracing',
    'verbs',
  ],
  http: ['api', 'auth', 'errors', 'mcp', 'metrics', 'model', 'subscribe', 'tracing', 'verbs'],
  grpc: ['auth', 'errors', 'metrics', 'model', 'recall', 'subscribe', 'tracing', 'verbs'],
  mcp: ['api', 'errors', 'model', 'verbs'],
  api: ['errors', 'model', 'recall', 'verbs'],
  verbs: [
    'auth',
    'cluster',
    'config',
    'embedding',
    'errors',
    'ingest',
    'metrics',
    'model',
    'protocol',
    'recall',
    'reflection',
    'router',
    'subscribe',
    'tracing',
  ],
  cluster: ['auth', 'config', 'errors', 'protocol', 'router', 'shard', 'subscribe'],
  'data-dir': ['config', 'files', 'protocol', 'shard'],
  reflection: [
    'analysis',
    'config',
    'embedding',
    'errors',
    'llm',
    'metrics',
    'model',
    'protocol',
    'router',
    'threads',
  ],
  subscribe: ['embedding', 'errors', 'metrics', 'model', 'protocol', 'router'],
  embedding: ['config', 'errors', 'metrics', 'threads', 'tracing'],
  router: ['data-dir', 'errors', 'model', 'protocol', 'threads', 'tracing'],
  auth: ['errors', 'files', 'model'],
  shard: ['analysis', 'errors', 'files', 'ingest', 'model', 'protocol', 'recall', 'threads'],
  metrics: ['protocol'],
  protocol: ['errors', 'model', 'recall'],
  analysis: ['recall'],
  recall: ['errors', 'model'],
};

/**
 * Doors: a folder that the files outside it reach only through some of its files. For each
 * folder, who outside it may import it (a file, or a folder ending in `/`) and which of its files
 * (relative to the folder; `*`: any). An importer not listed may import none of it.
 */
export const DOORS: Record<string, Record<string, readonly string[]>> = {
  'src/shard/': {
    'src/cluster/': ['shard.ts', 'storage.ts', 'persist/codec.ts'],
    'src/data-dir.ts': ['persist/salvage.ts'],
  },
  'src/shard/persist/': {
    'src/shard/local-storage.ts': ['*'],
    'src/shard/erasure.ts': ['*'],
    'src/cluster/': ['codec.ts'],
    'src/data-dir.ts': ['salvage.ts'],
  },
};

/** The longest a source file may be. */
const MAX_LINES = 400;
/** Files allowed past MAX_LINES, each with its reason: none (cluster/node.ts was split by concept for issue 24). */
const LONG_FILES = new Set<string>();

/** Libraries (and `process.env`) fenced in: the files or folders (ending in `/`) that may use each. */
export const FENCES: Record<string, readonly string[]> = {
  'hnswlib-node': ['src/shard/index/hnsw.ts'],
  'flashbulb-malloc-trim': ['src/threads/release-memory.ts'],
  'onnxruntime-node': ['src/embedding/onnx-embedder.ts', 'src/embedding/rerank-model.ts'],
  '@huggingface/tokenizers': ['src/embedding/onnx-embedder.ts', 'src/embedding/rerank-model.ts'],
  // Frames on disk; cluster mode's forwarded requests and stream-log messages are msgpack too.
  msgpackr: ['src/shard/persist/frames.ts', 'src/cluster/forward.ts', 'src/cluster/stream-log.ts'],
  '@nats-io/': ['src/cluster/'],
  '@modelcontextprotocol/sdk': ['src/mcp/', 'src/cli/mcp-stdio.ts'],
  // The benchmarks are clients of a running server and may speak its protocols.
  '@grpc/grpc-js': ['src/grpc/', 'native-bench/'],
  '@grpc/proto-loader': ['src/grpc/', 'native-bench/'],
  'node:http': ['src/http/listener.ts', 'native-bench/'],
  // The benchmarks start servers as child processes and hand them the environment.
  'process.env': ['src/config/', 'native-bench/'],
  // The tracing benchmark collects spans with the SDK's in-memory exporter.
  '@opentelemetry/': ['src/tracing/', 'native-bench/'],
  // The command line's parser.
  commander: ['src/cli.ts', 'src/cli/'],
};

function room(path: string): string {
  const parts = path.split('/');
  if (parts[0] !== 'src') return parts[0]!;
  return parts.length === 2 ? parts[1]!.replace(/\.ts$/, '') : parts[1]!;
}

function fileCycles(): string[] {
  const next = adjacency(local.map((e) => [e.from, e.to]));
  return cycles(
    sources.map((s) => s.path),
    (n) => next.get(n) ?? [],
  ).map((c) => `file cycle: ${cyclePath(c, (n) => next.get(n) ?? [])}`);
}

/** A file's folder, except that each file at the root of src/ (app, cli, data-dir) is a unit of its own. */
function folder(path: string): string {
  return dirname(path) === 'src' ? path : dirname(path);
}

function folderCycles(): string[] {
  const pairs = local
    .map((e) => [folder(e.from), folder(e.to)] as const)
    .filter(([a, b]) => a !== b);
  const next = adjacency(pairs);
  const folders = [...new Set(sources.map((s) => folder(s.path)))];
  return cycles(folders, (n) => next.get(n) ?? []).map(
    (c) => `folder cycle: ${cyclePath(c, (n) => next.get(n) ?? [])} (${witnesses(c).join('; ')})`,
  );
}

/** The imports that make a folder cycle, so the message names files, not only folders. */
function witnesses(component: string[]): string[] {
  const members = new Set(component);
  const found = local.filter(
    (e) =>
      folder(e.from) !== folder(e.to) && members.has(folder(e.from)) && members.has(folder(e.to)),
  );
  return found.map((e) => `${e.from} imports ${e.spec}`);
}

function adjacency(pairs: ReadonlyArray<readonly [string, string]>): Map<string, Set<string>> {
  const next = new Map<string, Set<string>>();
  for (const [a, b] of pairs) next.set(a, (next.get(a) ?? new Set()).add(b));
  return next;
}

function directionViolations(): string[] {
  return local.flatMap((e) => {
    const [from, to] = [room(e.from), room(e.to)];
    if (from === to || from === 'native-bench') return [];
    if ((MAY_IMPORT[from] ?? []).includes(to)) return [];
    return [`arrow ${from} → ${to}: ${e.from} imports ${e.spec}`];
  });
}

/** Arrows of the table that no import uses: the table lists only the imports that exist. */
function unusedArrows(): string[] {
  const used = new Set(local.map((e) => `${room(e.from)} → ${room(e.to)}`));
  return Object.entries(MAY_IMPORT).flatMap(([from, tos]) =>
    tos
      .filter((to) => !used.has(`${from} → ${to}`))
      .map((to) => `arrow ${from} → ${to} is in the table, but nothing imports along it`),
  );
}

/** Imports into a folder with doors from outside it that go through no door. */
function doorViolations(): string[] {
  return local.flatMap((e) => {
    if (e.from.startsWith('native-bench/')) return [];
    return Object.entries(DOORS).flatMap(([folder, doors]) => {
      if (!e.to.startsWith(folder) || e.from.startsWith(folder)) return [];
      const importer = Object.keys(doors).find((k) =>
        k.endsWith('/') ? e.from.startsWith(k) : e.from === k,
      );
      const allowed = importer === undefined ? [] : doors[importer]!;
      if (allowed.includes('*') || allowed.includes(e.to.slice(folder.length))) return [];
      const through = allowed.length === 0 ? 'no door' : `only ${allowed.join(', ')}`;
      return [`door ${folder}: ${e.from} imports ${e.spec} (${through} for it)`];
    });
  });
}

function fenceViolations(): string[] {
  const uses = [
    ...edges.filter((e) => e.to === null).map((e) => ({ from: e.from, what: e.spec })),
    ...sources.filter((s) => s.readsEnv).map((s) => ({ from: s.path, what: 'process.env' })),
  ];
  return uses.flatMap(({ from, what }) => {
    const fence = Object.keys(FENCES).find(
      (lib) => what === lib || what.startsWith(lib.endsWith('/') ? lib : `${lib}/`),
    );
    if (fence === undefined) return [];
    const allowed = FENCES[fence]!.some((p) => (p.endsWith('/') ? from.startsWith(p) : from === p));
    return allowed ? [] : [`fence ${fence}: ${from} uses ${what}`];
  });
}

/** The room table of ARCHITECTURE.md ("may import"; notes in parentheses dropped), rooms importing nothing left out. */
function documentedTable(): Record<string, string[]> {
  const text = readFileSync(new URL('../../ARCHITECTURE.md', import.meta.url), 'utf8');
  const section = text.slice(
    text.indexOf('### Which room may import which'),
    text.indexOf('### Doors'),
  );
  const rows = section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| room') && !l.startsWith('|---'));
  const table: Record<string, string[]> = {};
  for (const row of rows) {
    const [room = '', allowed = ''] = row
      .split('|')
      .slice(1, 3)
      .map((c) => c.replace(/\([^)]*\)/g, '').trim());
    if (allowed === 'nothing of ours') continue;
    table[room] = allowed
      .split(',')
      .map((r) => r.trim())
      .sort();
  }
  return table;
}

/** The doors table of ARCHITECTURE.md (folder, importer, files), in the shape of DOORS. */
function documentedDoors(): Record<string, Record<string, string[]>> {
  const text = readFileSync(new URL('../../ARCHITECTURE.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('### Doors'), text.indexOf('### Library fences'));
  const rows = section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| folder') && !l.startsWith('|---'));
  const doors: Record<string, Record<string, string[]>> = {};
  const path = (cell: string): string => `src/${cell.replace(/`/g, '').trim()}`;
  for (const row of rows) {
    const [folder = '', importer = '', files = ''] = row.split('|').slice(1, 4);
    const list =
      files.trim() === 'any file' ? ['*'] : files.split(',').map((f) => f.replace(/`/g, '').trim());
    (doors[path(folder)] ??= {})[path(importer)] = list;
  }
  return doors;
}

describe('architecture', () => {
  it('reads the whole tree (the scan is not empty)', () => {
    expect(sources.length).toBeGreaterThan(100);
    expect(local.length).toBeGreaterThan(300);
  });

  it('has no file-level import cycle', () => {
    expect(fileCycles()).toEqual([]);
  });

  it('has no folder-level import cycle', () => {
    expect(folderCycles()).toEqual([]);
  });

  it('imports only down the who-may-import-whom table', () => {
    expect(directionViolations()).toEqual([]);
  });

  it('lists in the table only the arrows that imports use', () => {
    expect(unusedArrows()).toEqual([]);
  });

  it('reaches a folder with doors only through them (the cluster through the shard, its storage port and the codec face)', () => {
    expect(doorViolations()).toEqual([]);
  });

  it('matches the doors ARCHITECTURE.md shows', () => {
    expect(documentedDoors()).toEqual(DOORS);
  });

  it('keeps native and transport libraries, and process.env, inside their fences', () => {
    expect(fenceViolations()).toEqual([]);
  });

  it('matches the table ARCHITECTURE.md shows', () => {
    expect(documentedTable()).toEqual(
      Object.fromEntries(Object.entries(MAY_IMPORT).map(([k, v]) => [k, [...v].sort()])),
    );
  });

  it(`keeps every source file within ${MAX_LINES} lines`, () => {
    const long = sources
      .filter((s) => s.lines > MAX_LINES && !LONG_FILES.has(s.path))
      .map((s) => `${s.path}: ${s.lines} lines`);
    expect(long).toEqual([]);
    for (const path of LONG_FILES)
      expect(
        sources.find((s) => s.path === path)?.lines ?? 0,
        `${path} is short now: drop it from LONG_FILES`,
      ).toBeGreaterThan(MAX_LINES);
  });

  it('opens every file in src/ with a one-paragraph @module header', () => {
    const held = sources.filter((s) => s.path.startsWith('src/'));
    expect(
      held.filter((s) => s.headerParagraphs === null).map((s) => `${s.path}: no @module header`),
    ).toEqual([]);
    expect(
      held
        .filter((s) => (s.headerParagraphs ?? 0) > 1)
        .map((s) => `${s.path}: ${s.headerParagraphs} paragraphs`),
    ).toEqual([]);
  });

  it('detects what it is meant to detect', () => {
    const next = adjacency([
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'a'],
      ['c', 'd'],
    ]);
    const found = cycles(['a', 'b', 'c', 'd'], (n) => next.get(n) ?? []);
    expect(found).toEqual([['a', 'b', 'c']]);
    expect(cyclePath(found[0]!, (n) => next.get(n) ?? [])).toBe('a → b → c → a');
    expect(room('src/http/routes.ts')).toBe('http');
    expect(room('src/app.ts')).toBe('app');
  });
});
