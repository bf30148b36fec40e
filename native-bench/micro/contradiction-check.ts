/**
 * @module native-bench/micro/contradiction-check — what the after-write contradiction check costs a
 * remember inside the shard: `checkContradictions` (src/shard/contradictions.ts) as the shard calls
 * it, neighbour searches included, with the real WordNet lexicon, on a workspace of `--memories`
 * (default 2,000) stored memories embedded with the hash embedder (the server's
 * FLASHBULB_EMBEDDER=hash, which the side-by-side CPU figures use). Two streams: the suite's corpus
 * (native-bench/suite/ops/dataset.ts, as side-by-side remembers it: 1–4 sentences, 90% about one of
 * 50 entities), a fifth of it restating, renumbering or negating a stored memory; and, when
 * ../shared/data/ has it, SICK train (the distinct A sentences stored, the B sentences of their
 * pairs checked: contradictions, entailments and neutral pairs in SICK's own proportions). Each new
 * memory is checked against the stored ones and not stored itself, so every round sees the same
 * workspace. Per stream: µs per check (tinybench, `--rounds` rounds), the findings per check, and a
 * digest of every record the whole stream's checks produce (edges and pending candidates with their
 * scores and reasons, without the random pending ids): a change that keeps every decision keeps
 * the digest.
 *
 *   node --import tsx native-bench/micro/contradiction-check.ts [--memories 2000] [--stream 4000] [--rounds 3] [--time-ms 3000] [--streams corpus,sick]
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { hashEmbedBatch } from '../../src/embedding/hash-embedder.ts';
import type { Lexicon } from '../../src/analysis/lexicon.ts';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { checkContradictions } from '../../src/shard/contradictions.ts';
import { loadLexicon } from '../../src/shard/lexicon-loader.ts';
import { ShardState } from '../../src/shard/store/apply.ts';
import type { LiveRecord } from '../../src/shard/store/records.ts';
import type { Workspace } from '../../src/shard/store/workspace.ts';
import { listFlag, numberFlag } from '../lib/args.ts';
import { Rng } from '../lib/prng.ts';
import { readSick } from '../lib/sick.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { Dataset } from '../suite/ops/dataset.ts';
import { microFlags, report } from './flags.ts';
import { memory } from './graph-fixture.ts';
import { measure } from './measure.ts';
import { BUSY_NOTE, loadCell } from './quiet.ts';

const DIM = 384;

interface Text {
  content: string;
  entityId: string | null;
}

interface Stream {
  name: string;
  stored: Text[];
  checked: Text[];
}

/** The suite's stream: every fifth new memory restates, renumbers or negates a stored one. */
function corpusStream(memories: number, stream: number, seed: number): Stream {
  const ds = new Dataset(new Rng(seed));
  const rng = new Rng(seed + 1);
  const next = (): Text => {
    const m = ds.nextMemory();
    return { content: m.content, entityId: m.entityId };
  };
  const stored = Array.from({ length: memories }, next);
  const checked = Array.from({ length: stream }, (_, i): Text => {
    if (i % 5 !== 4) return next();
    const s = rng.pick(stored);
    const variant = rng.int(3);
    const content =
      variant === 0
        ? s.content.replace(/^(\S+ \S+)/, '$1 never')
        : variant === 1
          ? s.content.replace(/\(ref \d+\)/, `(ref ${rng.int(100_000)})`)
          : `As noted before: ${s.content}`;
    return { content, entityId: s.entityId };
  });
  return { name: 'suite corpus', stored, checked };
}

/** SICK train: the first `memories` distinct A sentences stored, the B sentences of their pairs checked. */
function sickStream(memories: number, stream: number): Stream | null {
  const path = ['../shared/data/sick/SICK_train.txt', '../../shared/data/sick/SICK_train.txt']
    .map((p) => resolve(p))
    .find((p) => existsSync(p));
  const pairs = path ? readSick(path) : null;
  if (!pairs) return null;
  const stored = new Map<string, Text>();
  const checked: Text[] = [];
  for (const p of pairs) {
    if (!stored.has(p.a) && stored.size < memories)
      stored.set(p.a, { content: p.a, entityId: null });
    if (stored.has(p.a) && p.b !== p.a && checked.length < stream)
      checked.push({ content: p.b, entityId: null });
  }
  return { name: 'SICK train', stored: [...stored.values()], checked };
}

function record(id: string, at: number, t: Text, vector: Float32Array): MemoryRecord {
  return { ...memory(id, at, vector, t.content), entityId: t.entityId };
}

function workspaceOf(s: Stream, t0: number): Workspace {
  const w = new ShardState().workspace('bench');
  const vectors = hashEmbedBatch(
    s.stored.map((t) => t.content),
    DIM,
  );
  s.stored.forEach((t, i) => {
    w.put(
      record(`m${String(i).padStart(6, '0')}`, t0 + i, t, vectors.subarray(i * DIM, (i + 1) * DIM)),
    );
  });
  while (w.vectors.indexSome(1000));
  void w.lexical; // indexes the lexical backlog, if any
  return w;
}

/** What a record says, without what differs from run to run (pending ids). */
function describe(r: LiveRecord): string {
  if (r.t === 'edge')
    return `edge ${r.e.source_id} ${r.e.edge_type} ${r.e.target_id} ${r.e.confidence} ${r.e.reason ?? ''}`;
  if (r.t === 'pending')
    return `pending ${r.p.memory_id_a} ${r.p.memory_id_b} ${r.p.proposed} ${r.p.classifier_score} ${r.p.similarity} ${r.p.reason ?? ''}`;
  return r.t;
}

async function main(): Promise<void> {
  const { quick, values } = microFlags([
    'memories',
    'stream',
    'rounds',
    'time-ms',
    'seed',
    'streams',
  ]);
  const memories = numberFlag(values, 'memories', 2000);
  const streamLength = numberFlag(values, 'stream', quick ? 1000 : 4000);
  const rounds = numberFlag(values, 'rounds', quick ? 1 : 3);
  const timeMs = numberFlag(values, 'time-ms', quick ? 1000 : 3000);
  const seed = numberFlag(values, 'seed', 42);
  const lexicon: Lexicon = await loadLexicon();
  const only = listFlag(values, 'streams', ['corpus', 'sick']);
  const streams = [
    only.includes('corpus') ? corpusStream(memories, streamLength, seed) : undefined,
    only.includes('sick') ? sickStream(memories, streamLength) : undefined,
  ].filter((s) => s !== undefined);
  const rows: Cell[][] = [];
  const digests: string[] = [];
  for (const s of streams) {
    if (s === null) {
      digests.push('SICK train: skipped (no ../shared/data/sick/SICK_train.txt)');
      continue;
    }
    const t0 = Date.now() * 1000 - 10_000_000;
    const w = workspaceOf(s, t0);
    const now = t0 + 5_000_000;
    const vectors = hashEmbedBatch(
      s.checked.map((t) => t.content),
      DIM,
    );
    const fresh = s.checked.map((t, i) =>
      record(
        `n${String(i).padStart(6, '0')}`,
        now + i,
        t,
        vectors.subarray(i * DIM, (i + 1) * DIM),
      ),
    );
    // One pass over the whole stream (it also warms the lexicon's memos): the digest and counts.
    const hash = createHash('sha256');
    let found = 0;
    let records = 0;
    const c0 = process.cpuUsage();
    for (const m of fresh) {
      const out = checkContradictions(w, [m], now + 10_000_000, lexicon);
      found += out.found;
      records += out.records.length;
      for (const r of out.records) hash.update(`${describe(r)}\n`);
    }
    const cpu = process.cpuUsage(c0);
    const passUs = (cpu.user + cpu.system) / fresh.length;
    digests.push(
      `${s.name}: ${s.stored.length} stored, ${fresh.length} checked, ${found} found, ${records} records, digest ${hash.digest('hex').slice(0, 16)}`,
    );
    let at = 0;
    for (let r = 1; r <= rounds; r++) {
      const m = await measure(
        `${s.name}, round ${r}`,
        () =>
          void checkContradictions(w, [fresh[at++ % fresh.length] as MemoryRecord], now, lexicon),
        { timeMs, iterations: 200 },
      );
      rows.push([
        s.name,
        r,
        m.p50Ms * 1000,
        m.meanMs * 1000,
        m.p99Ms * 1000,
        m.samples,
        r === 1 ? passUs : '',
        loadCell(m.quiet),
      ]);
    }
  }
  report(
    `The contradiction check per remember (${memories.toLocaleString('en')} memories stored, hash embedder, WordNet)`,
    formatTable(
      ['stream', 'round', 'p50 µs', 'mean µs', 'p99 µs', 'checks', 'first pass CPU µs', 'load'],
      rows,
    ),
    'the shard CPU one after-write contradiction check costs (neighbour searches, candidate rule, classifier), and a digest of its decisions.',
    [BUSY_NOTE, ...digests],
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
