/**
 * @module native-bench/lib/sick — SICK sentence pairs (tab-separated: pair_ID, sentence_A,
 * sentence_B, relatedness_score, entailment_judgment), a seeded label-balanced sample of them, and
 * the contradiction-detection score: recall on CONTRADICTION pairs, false alarms per 100 ENTAILMENT
 * and per 100 NEUTRAL pairs. The data is licensed for evaluation only and read from
 * ../shared/data/sick/, never copied into this repository. In-process cosines come from the model
 * in FLASHBULB_MODEL_DIR, else the server's default ({@link benchModelDir}).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { DEFAULTS } from '../../src/config/index.ts';
import { CENTRE_FILE, createOnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import { Rng } from './prng.ts';

export const LABELS = ['CONTRADICTION', 'ENTAILMENT', 'NEUTRAL'] as const;
export type Label = (typeof LABELS)[number];

export interface SickPair {
  id: string;
  a: string;
  b: string;
  label: Label;
}

/** What the service (or the in-process harness) concluded about one pair. */
export interface Outcome {
  pair: SickPair;
  /** 'edge': a `contradicts` edge; 'pending': a pending candidate; 'none': nothing. */
  found: 'edge' | 'pending' | 'none';
  /** Whether the pair was compared at all (a candidate); null when the run cannot tell. */
  compared: boolean | null;
  reason: string;
}

export function readSick(path: string): SickPair[] | null {
  if (!existsSync(path)) return null;
  const pairs: SickPair[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
    const [id, a, b, , label] = line.split('\t');
    if (id === undefined || a === undefined || b === undefined || label === undefined) continue;
    const l = label.trim();
    if ((LABELS as readonly string[]).includes(l)) pairs.push({ id, a, b, label: l as Label });
  }
  return pairs;
}

/** `perLabel` pairs of each label (all of a label when it has fewer), seeded; the input order otherwise. */
export function sample(pairs: readonly SickPair[], perLabel: number, seed: number): SickPair[] {
  const rng = new Rng(seed);
  const out: SickPair[] = [];
  for (const label of LABELS) {
    const of = pairs.filter((p) => p.label === label);
    for (let i = of.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [of[i], of[j]] = [of[j] as SickPair, of[i] as SickPair];
    }
    out.push(...of.slice(0, perLabel));
  }
  return out;
}

export interface Score {
  pairs: Record<Label, number>;
  recall: number;
  precision: number;
  falseAlarmsPer100Entailment: number;
  falseAlarmsPer100Neutral: number;
  /** Contradiction pairs the check never compared (null when unknown). */
  neverCompared: number | null;
  /** Contradiction pairs left as pending candidates only (counted as found). */
  pendingOnly: number;
}

/** An edge or a pending candidate counts as flagged: both tell the agent the two memories conflict. */
export function score(outcomes: readonly Outcome[]): Score {
  const flagged = (o: Outcome): boolean => o.found !== 'none';
  const of = (l: Label): Outcome[] => outcomes.filter((o) => o.pair.label === l);
  const [c, e, n] = [of('CONTRADICTION'), of('ENTAILMENT'), of('NEUTRAL')];
  const hits = c.filter(flagged).length;
  const alarms = e.filter(flagged).length + n.filter(flagged).length;
  const unknown = c.some((o) => o.compared === null);
  return {
    pairs: { CONTRADICTION: c.length, ENTAILMENT: e.length, NEUTRAL: n.length },
    recall: c.length === 0 ? 0 : hits / c.length,
    precision: hits + alarms === 0 ? 1 : hits / (hits + alarms),
    falseAlarmsPer100Entailment: e.length === 0 ? 0 : (100 * e.filter(flagged).length) / e.length,
    falseAlarmsPer100Neutral: n.length === 0 ? 0 : (100 * n.filter(flagged).length) / n.length,
    neverCompared: unknown ? null : c.filter((o) => o.compared === false).length,
    pendingOnly: c.filter((o) => o.found === 'pending').length,
  };
}

export function printScore(title: string, s: Score): void {
  console.log(
    `${title}: ${s.pairs.CONTRADICTION} contradiction / ${s.pairs.ENTAILMENT} entailment / ${s.pairs.NEUTRAL} neutral pairs`,
  );
  console.log(
    `  recall ${s.recall.toFixed(3)}  precision ${s.precision.toFixed(3)}` +
      `  false alarms per 100 entailment ${s.falseAlarmsPer100Entailment.toFixed(2)}, per 100 neutral ${s.falseAlarmsPer100Neutral.toFixed(2)}`,
  );
  console.log(
    `  contradictions never compared: ${s.neverCompared ?? 'unknown'}; flagged only as pending candidates: ${s.pendingOnly}`,
  );
}

/** Misses and false alarms, one line each, with what decided. */
export function explain(outcomes: readonly Outcome[]): void {
  for (const o of outcomes) {
    const flagged = o.found !== 'none';
    if (flagged === (o.pair.label === 'CONTRADICTION')) continue;
    const what = flagged
      ? `FALSE ALARM (${o.pair.label.toLowerCase()}, ${o.found})`
      : o.compared === false
        ? 'MISS (never compared)'
        : 'MISS';
    console.log(`${what} #${o.pair.id} [${o.reason}]\n    A: ${o.pair.a}\n    B: ${o.pair.b}`);
  }
}

/** The model the in-process benches embed with: FLASHBULB_MODEL_DIR as the server reads it, else the server's default. */
export function benchModelDir(): string {
  const dir = process.env.FLASHBULB_MODEL_DIR;
  return resolve(dir !== undefined && dir !== '' ? dir : DEFAULTS.FLASHBULB_MODEL_DIR);
}

/**
 * A cache file under the OS temporary directory named for the model too (its directory, graph size
 * and centre), so two models, or one model with and without its centre, never share one.
 */
export function cachePath(modelDir: string, name: string): string {
  const centre = join(modelDir, CENTRE_FILE);
  const print = createHash('sha256')
    .update(
      `${statSync(join(modelDir, 'model.onnx')).size}:${existsSync(centre) ? readFileSync(centre, 'utf8') : ''}`,
    )
    .digest('hex')
    .slice(0, 8);
  return join(tmpdir(), `flashbulb-sick-${basename(modelDir)}-${print}-${name}`);
}

/** Cosine of A and B per pair id, from {@link benchModelDir}'s model (cached per model and split). */
export async function cosinesOf(
  split: string,
  pairs: readonly SickPair[],
): Promise<Map<string, number>> {
  const modelDir = benchModelDir();
  const cache = cachePath(modelDir, `${split}-cosines.json`);
  if (existsSync(cache))
    return new Map(
      Object.entries(JSON.parse(readFileSync(cache, 'utf8')) as Record<string, number>),
    );
  const embedder = await createOnnxEmbedder({ modelDir, threads: 1 });
  const out = new Map<string, number>();
  try {
    for (let i = 0; i < pairs.length; i += 64) {
      const chunk = pairs.slice(i, i + 64);
      const v = await embedder.embed(chunk.flatMap((p) => [p.a, p.b]));
      chunk.forEach((p, j) => {
        let dot = 0;
        for (let d = 0; d < embedder.dim; d++)
          dot +=
            (v[2 * j * embedder.dim + d] as number) * (v[(2 * j + 1) * embedder.dim + d] as number);
        out.set(p.id, dot);
      });
    }
  } finally {
    await embedder.close();
  }
  writeFileSync(cache, JSON.stringify(Object.fromEntries(out)));
  return out;
}
