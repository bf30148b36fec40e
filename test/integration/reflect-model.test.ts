/**
 * Reflection with the real embedding model (FLASHBULB_EMBEDDER=model, the default model in
 * models/; DESIGN.md 9, 12): natural sentences on 4 themes (8 each) that share meaning more than
 * words, plus 6 unrelated statements. One insight per theme, drawing only on that theme, written
 * extractively from the theme's own central statements and terms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const THEMES: Record<string, string[]> = {
  garden: [
    'The tomato plants in the back garden need watering every morning in July.',
    'I added compost to the garden beds before planting the tomato seedlings.',
    'Slugs ate half of the lettuce in the vegetable garden last night.',
    'The garden tomatoes ripened early this year thanks to the sunny weather.',
    'Basil grows best in the garden next to the tomato plants.',
    'I built a raised garden bed from cedar planks for the herbs and tomatoes.',
    'The drip irrigation hose in the garden keeps the tomato roots moist.',
    'Aphids appeared on the garden peppers, so I sprayed them with soapy water.',
  ],
  running: [
    'I ran ten kilometres along the river this morning in preparation for the marathon.',
    'My marathon training plan has a long run every Sunday morning.',
    'New running shoes reduced the knee pain I had during long runs.',
    'The marathon coach said to keep easy runs at a conversational pace.',
    'I finished the half marathon in one hour and fifty minutes.',
    'Interval running on the track on Wednesdays builds speed for the marathon.',
    'After long runs I stretch my calves and hamstrings for fifteen minutes.',
    'The city marathon route passes the harbour and finishes in the park.',
  ],
  database: [
    'The Postgres database slowed down because the orders table was missing an index.',
    'Adding an index on customer_id made the slow Postgres query ten times faster.',
    'The database connection pool ran out of connections during the traffic spike.',
    'We vacuum the Postgres database tables every night to reclaim space.',
    'Query plans in the Postgres database showed a sequential scan on the orders table.',
    'The database replica lagged behind the primary by several seconds during the backup.',
    'We raised the Postgres work_mem setting so that database sorts stay in memory.',
    'Slow database queries are logged when they take longer than 500 milliseconds in Postgres.',
  ],
  baking: [
    'My sourdough bread starter needs feeding with flour and water twice a day.',
    'The sourdough loaf rose better after a longer overnight proof in the fridge.',
    'Baking the sourdough bread in a Dutch oven gives it a crisp crust.',
    'I use seventy percent hydration dough for my sourdough bread.',
    'Whole wheat flour makes the sourdough bread denser and nuttier.',
    'Scoring the sourdough loaf before baking lets the bread expand evenly.',
    'The sourdough starter smelled sour after a week in the fridge without feeding.',
    'I bake sourdough bread every Saturday morning for the family breakfast.',
  ],
};
const NOISE = [
  'The dentist appointment was moved to Friday afternoon.',
  'My passport expires next March.',
  'The cat knocked a glass off the kitchen table.',
  'Jupiter has dozens of known moons.',
  'I bought noise-cancelling headphones for the office.',
  'The electricity bill arrived two days late.',
];
const KEY_TERMS: Record<string, string[]> = {
  garden: ['garden'],
  running: ['marathon'],
  database: ['postgres', 'database'],
  baking: ['sourdough'],
};

let t: TestApp;
const labelOf = new Map<string, string>();
const textOf = new Map<string, string>();
let reflected: any;
let insights: any[];

beforeAll(async () => {
  t = await startTestApp({}, { FLASHBULB_EMBEDDER: 'model' });
  const items: Array<[string, string]> = [];
  for (let i = 0; i < 8; i++) {
    for (const [label, texts] of Object.entries(THEMES)) items.push([texts[i] as string, label]);
    if (NOISE[i]) items.push([NOISE[i] as string, 'noise']);
  }
  for (const [content, label] of items) {
    const res = await t.req('POST', '/v1/memories', { body: { content } });
    expect(res.status, res.text).toBe(201);
    labelOf.set(res.body.memory_id, label);
    textOf.set(res.body.memory_id, content);
  }
  const res = await t.req('POST', '/v1/reflect', { body: {} });
  expect(res.status, res.text).toBe(200);
  reflected = res.body;
  insights = (await t.req('GET', '/v1/insights')).body;
});
afterAll(async () => {
  await t?.stop();
});

const layout = (): string =>
  insights
    .map((i) => (i.source_memory_ids as string[]).map((id) => labelOf.get(id)).join(','))
    .join(' | ');

describe('reflection with the default model', () => {
  it('runs on the model embedder', async () => {
    expect(t.config.embedder).toBe('model');
    expect(reflected.memories_processed).toBe(38);
  });

  it('writes one insight per theme, each drawing only on that theme (no noise, nothing from another theme)', () => {
    expect(insights, layout()).toHaveLength(4);
    const seen = new Set<string>();
    for (const ins of insights) {
      const labels = new Set((ins.source_memory_ids as string[]).map((id) => labelOf.get(id)));
      expect(labels.size, `mixed: ${layout()}`).toBe(1);
      const theme = [...labels][0] as string;
      expect(theme, layout()).not.toBe('noise');
      expect(seen.has(theme), `split: ${layout()}`).toBe(false);
      seen.add(theme);
      expect(ins.source_memory_ids.length, layout()).toBeGreaterThanOrEqual(6);
    }
  });

  it('each insight is an extractive summary of its own theme: whole central statements and the theme’s terms', () => {
    for (const ins of insights) {
      const text = ins.content as string;
      const sources = ins.source_memory_ids as string[];
      const counts = new Map<string, number>();
      for (const id of sources)
        counts.set(labelOf.get(id) as string, (counts.get(labelOf.get(id) as string) ?? 0) + 1);
      const theme = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] as string;
      expect(ins.kind).toBe('insight');
      expect(ins.context).toMatchObject({ method: 'extractive', source_count: sources.length });
      const quoted = sources.filter((id) => text.includes(textOf.get(id) as string));
      expect(quoted.length, text).toBeGreaterThanOrEqual(2);
      const foreign = [...textOf].filter(([id, s]) => !sources.includes(id) && text.includes(s));
      expect(foreign, text).toEqual([]);
      if (theme !== 'noise') {
        for (const term of KEY_TERMS[theme] ?? []) {
          expect(ins.context.tags, `${theme}: ${JSON.stringify(ins.context.tags)}`).toContain(term);
          expect(text.toLowerCase()).toContain(term);
        }
      }
    }
  });
});
