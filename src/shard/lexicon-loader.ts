/**
 * @module shard/lexicon-loader — the contradiction classifier's lexicon (analysis/lexicon), once
 * per process, lazily: a worker (shard/lexicon-worker) reads and parses WordNet's files and
 * transfers the packed tables, which the shard wraps without building anything. Without the
 * package's files, or when the worker fails, the classifier runs on its built-in word lists
 * (EMPTY_LEXICON) and says so once on stderr.
 */
import type { Worker } from 'node:worker_threads';
import { EMPTY_LEXICON, lexiconOf, type Lexicon } from '../analysis/lexicon.ts';
import type { LexiconTables } from '../analysis/lexicon-tables.ts';
import { startWorker } from '../threads/worker-url.ts';

let loading: Promise<Lexicon> | null = null;

/** The lexicon, built on the first call (about 1 s of another thread, see docs/benchmarks.md); later calls share it. */
export function loadLexicon(): Promise<Lexicon> {
  loading ??= build().catch((err: unknown) => {
    console.error(
      `contradiction check: WordNet not loaded (${String(err)}); using the built-in word lists only`,
    );
    return EMPTY_LEXICON;
  });
  return loading;
}

function build(): Promise<Lexicon> {
  return new Promise((resolve, reject) => {
    // Not unref'd: a process whose only work is waiting for the tables must not exit first. The
    // worker exits by itself once it has replied (and with its shard, which terminates it).
    const worker: Worker = startWorker('shard/lexicon-worker', {});
    worker.once('message', (reply: { tables?: LexiconTables; error?: string }) => {
      if (reply.tables) resolve(lexiconOf(reply.tables));
      else reject(new Error(reply.error ?? 'no tables'));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`lexicon worker exited (${code})`)));
  });
}
