/**
 * The real embedding model (DESIGN.md 12): bge-small-en-v1.5 (int8 ONNX) in models/. Its vectors
 * match reference vectors computed independently in Python, and through the server it retrieves
 * facts from paraphrased questions that share few words with them, at an accuracy the hash
 * embedder cannot reach — which proves the server really runs the model.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/index.ts';
import { row } from '../../src/embedding/embedder.ts';
import { createOnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import { dot } from '../../src/recall/vector.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const MODEL_DIR = DEFAULTS.FLASHBULB_MODEL_DIR;
const REFERENCE = JSON.parse(
  readFileSync(new URL('../fixtures/embedding-reference.json', import.meta.url), 'utf8'),
) as {
  dim: number;
  sentences: Array<{ text: string; vector: number[] }>;
};

/** Facts and questions about them, worded differently on purpose (few shared words). */
const FACTS: ReadonlyArray<readonly [fact: string, question: string]> = [
  [
    'My sister adopted a golden retriever puppy named Biscuit last spring.',
    'What kind of dog did my sibling get?',
  ],
  [
    'The quarterly budget meeting was moved from Tuesday to Thursday afternoon.',
    'When is the finance review session happening now?',
  ],
  [
    'I am severely allergic to shellfish, especially shrimp and lobster.',
    'Which seafood must be kept off my plate?',
  ],
  [
    "The car's check-engine light turned on because of a loose gas cap.",
    'Why was the vehicle warning indicator lit?',
  ],
  [
    'Our wifi router sits in the hallway closet with the password taped to its side.',
    'Where can I find the internet network credentials?',
  ],
  [
    "Grandma's apple pie recipe uses cinnamon, nutmeg and a butter crust.",
    'What spices go into the family fruit dessert?',
  ],
  [
    'The marathon starts at 7 a.m. near the city harbor on Sunday.',
    'What time does the long-distance running race begin?',
  ],
  [
    'Python 3.12 removed the distutils module from the standard library.',
    'Which packaging tool was dropped from the programming language?',
  ],
  [
    'The dentist said I need a filling in my lower left molar.',
    'What did the tooth doctor recommend?',
  ],
  [
    'Our flight to Tokyo departs from gate 42 at terminal 3.',
    'Where do we board the plane to Japan?',
  ],
  [
    'The basil plant on the balcony wilts if it is not watered daily.',
    'How often does the herb outside need moisture?',
  ],
  ['Mark prefers his coffee black with no sugar.', 'How does he like his morning brew?'],
  [
    'The office printer jams whenever you use thick cardstock.',
    'Why does the copier keep getting stuck?',
  ],
  [
    'The mortgage payment is due on the first of every month.',
    'When do I have to pay for the house loan?',
  ],
  [
    'Jupiter is the largest planet in our solar system.',
    'Which world orbiting the sun is the biggest?',
  ],
  [
    'The library closes early at 5 p.m. on Fridays.',
    'When does the book lending place shut at the end of the week?',
  ],
  ['I broke my wrist skateboarding when I was twelve.', 'What injury did I suffer as a child?'],
  [
    "The company's new CEO previously ran a shipping firm in Rotterdam.",
    "What was the background of the organization's new chief executive?",
  ],
  [
    'Photosynthesis turns sunlight, water and carbon dioxide into sugar and oxygen.',
    'How do plants make food from light?',
  ],
  [
    'The babysitter charges twenty dollars per hour on weekends.',
    'How much does the childcare helper cost on Saturdays?',
  ],
  [
    'Our team switched from Jenkins to GitHub Actions for continuous integration.',
    'What build pipeline service do we use now?',
  ],
  [
    'The heating bill doubled in January because of the cold snap.',
    'Why was the winter energy invoice so high?',
  ],
  [
    'My passport expires in March, so I must renew it before the trip.',
    'Which travel document needs updating soon?',
  ],
  [
    'The violin lesson was rescheduled because the teacher had the flu.',
    'Why was the music class postponed?',
  ],
  [
    'Tomatoes should be stored at room temperature, not in the fridge.',
    'Where is the best place to keep these red vegetables?',
  ],
  [
    'The server crashed last night after the disk filled up with log files.',
    'What caused the machine outage overnight?',
  ],
  [
    'Elena speaks fluent Portuguese because she grew up in Brazil.',
    'Which foreign language does she know well?',
  ],
  [
    'The museum offers free admission on the first Sunday of each month.',
    'When can I visit the gallery without paying?',
  ],
  [
    'A leaking kitchen faucet wastes several gallons of water a day.',
    'How much does a dripping tap squander?',
  ],
  [
    'Our landlord will repaint the apartment before we move in.',
    'What will the property owner do to the flat?',
  ],
  [
    'The pancake batter needs two cups of flour, one egg and milk.',
    'What goes into the breakfast griddle cakes?',
  ],
  [
    'Regular exercise lowers the risk of heart disease.',
    'How can working out help cardiovascular health?',
  ],
  [
    'The train to Boston was delayed forty minutes by a signal failure.',
    'Why was the rail trip late?',
  ],
  [
    'Our cat hides under the bed during thunderstorms.',
    "Where does the kitty go when there's lightning?",
  ],
  ['The contract renewal deadline is June 30th.', 'By when must the agreement be extended?'],
  ['Honey never spoils if it is kept sealed.', 'Does the sweet bee product go bad?'],
  [
    'The electric guitar needs new strings before the concert.',
    'What must be replaced on the instrument ahead of the show?',
  ],
  [
    'Volcanic eruptions can cool the global climate by blocking sunlight with ash.',
    'How do lava explosions affect world temperatures?',
  ],
  [
    'I renewed my gym membership for another year at a discount.',
    'Did I extend my fitness club subscription?',
  ],
  [
    "The toddler's favorite bedtime story is about a sleepy bear.",
    'Which tale does the little kid want before sleeping?',
  ],
];

/**
 * Measured through the server (hybrid similarity, default scoring, facts stored in order):
 * bge-small-en-v1.5 gets top-1 0.875 and top-3 1.000 (0.900 with crowding off, 0.925 before a
 * recall reinforced only its first result; dense alone, in process: top-1 0.975); the hash
 * embedder top-1 0.075 and top-3 0.225. bge's top-1 misses are near ties in relevance (0.21
 * against 0.19) that the reinforcement term and the crowding of 40 unrelated facts decide; the
 * retrieval benchmark (held-out LoCoMo and LifeBench) is what judges those terms, this test only
 * that the model runs. The thresholds sit a little below the model: at most six top-1 misses and
 * one top-3 miss out of 40, far above the hash embedder.
 */
const TOP1_MIN = 0.85;
const TOP3_MIN = 0.975;

interface Accuracy {
  top1: number;
  top3: number;
  misses: string[];
}

/** Stores every fact, asks every question (similarity, top 3) and scores the answers. */
async function measure(t: TestApp): Promise<Accuracy> {
  // One after another, so the write order (which the neighbour and thread features read) is the same every run.
  const stored: string[] = [];
  for (const [fact] of FACTS) {
    const res = await t.req('POST', '/v1/memories', { body: { content: fact } });
    expect(res.status, res.text).toBe(201);
    stored.push(res.body.memory_id as string);
  }
  let top1 = 0;
  let top3 = 0;
  const misses: string[] = [];
  for (const [i, [, question]] of FACTS.entries()) {
    const res = await t.req('POST', '/v1/recall', {
      body: { cue: question, strategies: ['similarity'], top_k: 3 },
    });
    expect(res.status, res.text).toBe(200);
    const got = (res.body.results as Array<{ memory: { memory_id: string } }>).map(
      (r) => r.memory.memory_id,
    );
    expect(got).toHaveLength(3);
    if (got[0] === stored[i]) top1 += 1;
    if (got.includes(stored[i] as string)) top3 += 1;
    else misses.push(question);
  }
  return { top1: top1 / FACTS.length, top3: top3 / FACTS.length, misses };
}

const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.stop();
});

describe('bge-small-en-v1.5 (int8 ONNX)', () => {
  it('embeds the reference sentences with cosine ≥ 0.99 to the stored reference vectors', async () => {
    const embedder = await createOnnxEmbedder({ centre: false, modelDir: MODEL_DIR });
    try {
      expect(embedder.dim).toBe(REFERENCE.dim);
      expect(REFERENCE.sentences.length).toBeGreaterThanOrEqual(5);
      const out = await embedder.embed(REFERENCE.sentences.map((s) => s.text));
      REFERENCE.sentences.forEach((s, i) => {
        const row = out.subarray(i * embedder.dim, (i + 1) * embedder.dim);
        let dot = 0;
        let nr = 0;
        let ns = 0;
        for (let k = 0; k < embedder.dim; k++) {
          const a = row[k] as number;
          const b = s.vector[k] as number;
          dot += a * b;
          nr += a * a;
          ns += b * b;
        }
        expect(Math.sqrt(nr), `norm of "${s.text}"`).toBeCloseTo(1, 4);
        expect(dot / Math.sqrt(nr * ns), `cosine for "${s.text}"`).toBeGreaterThanOrEqual(0.99);
      });
    } finally {
      await embedder.close();
    }
  });

  it('is centred: unrelated facts sit near cosine 0 (about 0.4 without the centre); one text a run', async () => {
    const centred = await createOnnxEmbedder({ modelDir: MODEL_DIR });
    const raw = await createOnnxEmbedder({ modelDir: MODEL_DIR, centre: false });
    try {
      expect(centred.maxBatch).toBe(1); // the int8 graph is quantised dynamically
      const facts = FACTS.slice(0, 12).map(([f]) => f);
      const meanUnrelated = async (e: typeof centred): Promise<number> => {
        const v = await e.embed(facts);
        let sum = 0;
        let n = 0;
        for (let i = 0; i < facts.length; i++) {
          for (let j = i + 1; j < facts.length; j++) {
            sum += dot(row(v, i, e.dim), row(v, j, e.dim));
            n += 1;
          }
        }
        return sum / n;
      };
      expect(Math.abs(await meanUnrelated(centred))).toBeLessThan(0.1);
      expect(await meanUnrelated(raw)).toBeGreaterThan(0.3);
    } finally {
      await centred.close();
      await raw.close();
    }
  });

  it("batches the int8 graph only when a benchmark asks, and writes ONNX Runtime's profile only when asked", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashbulb-ort-profile-'));
    const plain = await createOnnxEmbedder({ modelDir: MODEL_DIR, maxBatch: 8 });
    const forced = await createOnnxEmbedder({
      modelDir: MODEL_DIR,
      maxBatch: 8,
      batchDynamicGraph: true,
      profileFilePrefix: join(dir, 'ort'),
    });
    try {
      expect(plain.maxBatch).toBe(1);
      expect(forced.maxBatch).toBe(8);
      const texts = FACTS.slice(0, 8).map(([f]) => f);
      const alone = await plain.embed(texts);
      const together = await forced.embed(texts);
      // One activation scale for the whole batch: the vectors move (what the server avoids).
      let worst = 1;
      for (let i = 0; i < texts.length; i++)
        worst = Math.min(worst, dot(row(alone, i, plain.dim), row(together, i, plain.dim)));
      expect(worst).toBeLessThan(0.9999);
      expect(worst).toBeGreaterThan(0.95);
      await forced.close();
      const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
      expect(files).toHaveLength(1);
      const events = JSON.parse(readFileSync(join(dir, files[0] as string), 'utf8')) as Array<{
        name?: string;
      }>;
      expect(events.filter((e) => e.name === 'model_run').length).toBeGreaterThanOrEqual(1);
    } finally {
      await plain.close();
      await forced.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`the server with the model retrieves ${FACTS.length} facts from paraphrased questions (top-1 ≥ ${TOP1_MIN}, top-3 ≥ ${TOP3_MIN})`, async () => {
    expect(FACTS.length).toBeGreaterThanOrEqual(36);
    const t = await startTestApp(
      {},
      { FLASHBULB_EMBEDDER: 'model', FLASHBULB_MODEL_DIR: MODEL_DIR },
    );
    apps.push(t);
    const acc = await measure(t);
    console.log(
      `model: top-1 ${acc.top1.toFixed(3)}, top-3 ${acc.top3.toFixed(3)}; missed: ${JSON.stringify(acc.misses)}`,
    );
    expect(acc.top1).toBeGreaterThanOrEqual(TOP1_MIN);
    expect(acc.top3).toBeGreaterThanOrEqual(TOP3_MIN);
  });

  it('the hash embedder fails those thresholds on the same facts (so passing them proves the model runs)', async () => {
    const t = await startTestApp();
    apps.push(t);
    const acc = await measure(t);
    console.log(`hash: top-1 ${acc.top1.toFixed(3)}, top-3 ${acc.top3.toFixed(3)}`);
    expect(acc.top1).toBeLessThan(TOP1_MIN);
    expect(acc.top3).toBeLessThan(TOP3_MIN);
  });
});
