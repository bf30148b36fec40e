/**
 * @module native-bench/micro/texts — seeded texts: short sentences for embedding throughput (a
 * unique reference number each, so the pool's cache never answers), corpus sentences of 40–300
 * characters (native-bench/lib/corpus.ts), and themed episodes whose words follow their cluster.
 */
import { sentence } from '../lib/corpus.ts';
import type { Rng } from '../lib/prng.ts';

const WHO = [
  'The customer',
  'Our on-call engineer',
  'Maria from support',
  'A new user',
  'The product manager',
  'The design team',
];
const DID = ['reported', 'asked about', 'confirmed', 'escalated', 'fixed', 'prefers'];
const WHAT = [
  'the March invoice',
  'slow PDF uploads',
  'dark mode',
  'the database migration',
  'a duplicate charge',
  'weekly summaries',
];

let serial = 0;

/** A short sentence (8–12 words), unique in this process. */
export function shortSentence(rng: Rng): string {
  serial += 1;
  return `${rng.pick(WHO)} ${rng.pick(DID)} ${rng.pick(WHAT)} today (ticket ${serial}).`;
}

/** A sentence of 40–300 characters, unique in this process. */
export function corpusSentence(rng: Rng): string {
  serial += 1;
  return `${sentence(rng)} #${serial}`;
}

/** Vocabulary of a theme: the words its episodes are made of. */
const THEMES: ReadonlyArray<readonly string[]> = [
  ['invoice', 'billing', 'refund', 'charge', 'payment', 'card'],
  ['deploy', 'release', 'rollback', 'pipeline', 'staging', 'canary'],
  ['latency', 'timeout', 'cluster', 'region', 'outage', 'spike'],
  ['onboarding', 'signup', 'tutorial', 'checklist', 'welcome', 'trial'],
  ['design', 'mockup', 'colour', 'layout', 'typography', 'darkmode'],
  ['contract', 'legal', 'compliance', 'audit', 'privacy', 'gdpr'],
  ['hiring', 'interview', 'candidate', 'offer', 'recruiter', 'salary'],
  ['travel', 'flight', 'hotel', 'lisbon', 'conference', 'visa'],
];

/** An episode about theme `t % 8` (two or three of its words in a varied frame). */
export function themedEpisode(rng: Rng, t: number): string {
  const words = THEMES[t % THEMES.length] as readonly string[];
  serial += 1;
  return `${rng.pick(WHO)} ${rng.pick(DID)} the ${rng.pick(words)} and the ${rng.pick(words)} issue, mentioning ${rng.pick(words)} (note ${serial}).`;
}

export const THEME_COUNT = THEMES.length;
