/**
 * @module native-bench/micro/unicode-checks — what issue 23's Unicode checks add per request, in
 * process: the edge check (`unicodeProblem`, and the JSON shape check that now includes it) on a
 * typical remember body, the reply repair (`repairJsonText` of the JSON text, no hit) on a
 * list reply of 20 memories, and `wellFormedDeep` on the same reply as a value (MCP, gRPC).
 *
 *   node --import tsx native-bench/micro/unicode-checks.ts [--time-ms 500]
 */
import { parseArgs } from 'node:util';
import { Bench } from 'tinybench';
import { jsonShapeProblem } from '../../src/model/json-shape.ts';
import { repairJsonText, unicodeProblem, wellFormedDeep } from '../../src/model/unicode.ts';
import { formatTable } from '../lib/table.ts';

const { values } = parseArgs({ options: { 'time-ms': { type: 'string', default: '500' } } });
const time = Number(values['time-ms']);

const words =
  'the quarterly budget review meeting moved to Thursday because finance needs more time — ünïcödé 😀 text'.split(
    ' ',
  );
const sentence = (n: number, seed: number): string =>
  Array.from({ length: n }, (_, i) => words[(i * 7 + seed) % words.length]).join(' ');
const body = {
  content: sentence(50, 1),
  context: { topic: 'budget', people: ['ana', 'bo'], priority: 2, note: sentence(10, 2) },
  entity_id: 'team-finance',
  importance: 0.7,
};
const memory = (i: number): Record<string, unknown> => ({
  memory_id: i.toString(16).padStart(32, '0'),
  content: sentence(50, i),
  importance: 0.5,
  context: { topic: 'budget', n: i },
  entity_id: 'team-finance',
  kind: 'episode',
  created_at: 1_700_000_000_000_000 + i,
  updated_at: 1_700_000_000_000_000 + i,
  access_count: 0,
  decay_score: 0.5,
});
const reply = { memories: Array.from({ length: 20 }, (_, i) => memory(i)), next_cursor: null };
const replyText = JSON.stringify(reply);

const bench = new Bench({ time, warmupIterations: 50 });
bench
  .add('JSON.parse of the remember body (for scale)', () => JSON.parse(JSON.stringify(body)))
  .add('unicodeProblem(remember body)', () => unicodeProblem('request body', body))
  .add('jsonShapeProblem(remember body), Unicode included', () =>
    jsonShapeProblem('request body', body),
  )
  .add('JSON.stringify(list reply of 20) (for scale)', () => JSON.stringify(reply))
  .add('repairJsonText(its text), the added work', () => repairJsonText(replyText))
  .add('wellFormedDeep(list reply of 20)', () => wellFormedDeep(reply));
await bench.run();
const rows = bench.tasks.map((t) => [
  t.name,
  ((t.result as { latency: { mean: number } } | undefined)?.latency.mean ?? NaN) * 1000,
]);
process.stdout.write(
  `${formatTable(
    ['operation', 'mean µs'],
    rows.map(([n, us]) => [n as string, (us as number).toFixed(2)]),
  )}\n`,
);
