/**
 * @module native-bench/lib/corpus — realistic memory bodies for POST /v1/memories: sentences of
 * 40–300 characters about a pool of ~50 entities, with small context objects; all from a seeded Rng.
 */
import type { Rng } from './prng.ts';

export interface RememberBody {
  content: string;
  entity_id?: string;
  importance: number;
  context: Record<string, string | number | boolean | string[]>;
}

const ENTITY_KINDS = ['user', 'customer', 'project', 'service', 'team'] as const;
const ENTITY_NAMES = [
  'ada',
  'brook',
  'cyra',
  'dorian',
  'elio',
  'fenna',
  'gus',
  'hale',
  'ines',
  'juno',
] as const;
/** 50 entity ids: every kind with every name. */
export const ENTITIES: readonly string[] = ENTITY_KINDS.flatMap((k) =>
  ENTITY_NAMES.map((n) => `${k}-${n}`),
);

const SUBJECTS = [
  'The customer',
  'Our on-call engineer',
  'The billing service',
  'Maria from support',
  'The mobile app',
  'The nightly export job',
  'A new user',
  'The product manager',
  'The search cluster',
  'The design team',
];
const VERBS = [
  'reported',
  'asked about',
  'complained about',
  'confirmed',
  'rolled back',
  'scheduled',
  'prefers',
  'forgot about',
  'escalated',
  'fixed',
];
const OBJECTS = [
  'the invoice for March',
  'a timeout when uploading large PDFs',
  'dark mode on every device',
  'the migration to the new database',
  'a refund for the duplicate charge',
  'weekly summaries by email',
  'the flaky integration test',
  'a meeting with the legal team',
  'latency spikes in the EU region',
  'the onboarding checklist',
];
const TAILS = [
  'yesterday afternoon',
  'after the last release',
  'during the Tuesday stand-up',
  'for the third time this month',
  'before the quarterly review',
  'while travelling in Lisbon',
  'right after midnight UTC',
  'in a long support thread',
];
const CLAUSES = [
  'and wants a follow-up by Friday',
  'because the previous workaround stopped working',
  'which blocked two other teams',
  'although nobody could reproduce it',
  'so we added a note to the runbook',
  'and mentioned a budget of 4,000 euros',
  'which matches what the metrics showed',
];
const SOURCES = ['chat', 'email', 'ticket', 'meeting', 'call'] as const;
const TAGS = [
  'billing',
  'bug',
  'preference',
  'infra',
  'sales',
  'urgent',
  'followup',
  'ux',
] as const;

/** One sentence of 40–300 characters. */
export function sentence(rng: Rng): string {
  let text = `${rng.pick(SUBJECTS)} ${rng.pick(VERBS)} ${rng.pick(OBJECTS)} ${rng.pick(TAILS)}`;
  const extra = rng.int(4);
  for (let i = 0; i < extra; i++) text += `, ${rng.pick(CLAUSES)}`;
  text += ` (ref ${rng.int(100_000)}).`;
  return text.length > 300 ? `${text.slice(0, 299)}.` : text;
}

export function rememberBody(rng: Rng): RememberBody {
  const body: RememberBody = {
    content: sentence(rng),
    importance: Math.round(rng.next() * 100) / 100,
    context: {
      source: rng.pick(SOURCES),
      session: `sess-${rng.int(5000)}`,
      turn: rng.int(40),
      tags: [rng.pick(TAGS), rng.pick(TAGS)],
    },
  };
  if (rng.next() < 0.9) body.entity_id = rng.pick(ENTITIES);
  return body;
}
