/**
 * @module analysis/summarize — the extractive insight for a cluster, written without a language
 * model: the cluster's distinguishing terms (tf-idf against all episodes in scope) and its most
 * central statements (closest to the centroid, near-duplicates skipped).
 */
import { dot } from '../recall/vector.ts';

const STOPWORDS = new Set(
  (
    'a an the and or but if then so of to in on at by for with from as is are was were be been being it its this that these those ' +
    'i you he she we they me him her us them my your his our their what which who whom when where why how all any both each few more ' +
    'most other some such no nor not only own same than too very can will just should now do does did done has have had having ' +
    "about above after again against below between into through during before over under up down out off once here there s t don't " +
    'also would could may might must shall one two got get gets like really much many lot lots yes ok'
  ).split(/\s+/),
);

export interface ClusterText {
  content: string;
  tags: string[];
  central: number[];
}

export function tokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []).filter(
    (t) => t.length > 2 && !STOPWORDS.has(t) && !/^\d+$/.test(t),
  );
}

/** Terms frequent in the cluster and rare elsewhere. */
export function distinguishingTerms(
  clusterTexts: readonly string[],
  allTexts: readonly string[],
  max = 5,
): string[] {
  return topTerms(
    documentCounts(clusterTexts),
    clusterTexts.length,
    documentCounts(allTexts),
    allTexts.length,
    max,
  );
}

/** For each term, the number of texts holding it. */
export function documentCounts(texts: Iterable<string>): Map<string, number> {
  const df = new Map<string, number>();
  for (const t of texts) for (const w of new Set(tokens(t))) df.set(w, (df.get(w) ?? 0) + 1);
  return df;
}

/**
 * The distinguishing terms from document counts: `tf` in the cluster's `size` texts, `df` in all
 * `n` texts (so a caller keeping the counts up to date need not read the texts again).
 */
export function topTerms(
  tf: ReadonlyMap<string, number>,
  size: number,
  df: ReadonlyMap<string, number>,
  n: number,
  max = 5,
): string[] {
  return [...tf]
    .filter(([, count]) => count >= Math.min(2, size))
    .map(([w, count]) => ({ w, score: (count / size) * Math.log(1 + n / (df.get(w) ?? 1)) }))
    .sort((a, b) => b.score - a.score || a.w.localeCompare(b.w))
    .slice(0, max)
    .map((x) => x.w);
}

/**
 * Indices (into `members`) of the most central, mutually distinct statements. Each member's
 * similarity to the centroid is computed once (not inside the sort's comparisons).
 */
export function centralStatements(
  members: readonly number[],
  rows: (i: number) => Float32Array,
  centroid: Float32Array,
  max = 3,
): number[] {
  const sim = new Float64Array(members.length);
  for (let k = 0; k < members.length; k++) sim[k] = dot(rows(members[k] as number), centroid);
  const order = Array.from(members.keys()).sort(
    (a, b) => (sim[b] as number) - (sim[a] as number) || a - b,
  );
  const chosen: number[] = [];
  for (const k of order) {
    const i = members[k] as number;
    if (chosen.some((j) => dot(rows(i), rows(j)) > 0.92)) continue;
    chosen.push(i);
    if (chosen.length === max) break;
  }
  return chosen;
}

export function extractiveInsight(opts: {
  texts: readonly string[];
  central: readonly number[];
  tags: readonly string[];
  size: number;
}): string {
  const statements = opts.central.map((i) => sentence(opts.texts[i] ?? '')).filter((s) => s !== '');
  const about = opts.tags.length > 0 ? `about ${opts.tags.slice(0, 3).join(', ')}` : 'on one theme';
  return `${opts.size} related memories ${about}. Most representative: ${statements.join(' ')}`;
}

function sentence(text: string): string {
  const t = text.trim().replace(/\s+/g, ' ');
  const short = t.length > 240 ? `${t.slice(0, 237)}…` : t;
  return /[.!?…]$/.test(short) ? short : `${short}.`;
}
