#!/usr/bin/env node
/**
 * @module cli — the `flashbulb` command (`serve | mcp | keys | workspaces | export | import | backup
 * | repair | help`, parsed in cli/program.ts). Key and workspace commands work offline against the
 * server's data directory (in cluster mode against the cluster's key store), so a lost admin key
 * is never a dead end, and neither is a damaged file (repair); export, import and backup talk to a
 * running server. Exit 0 when done, 1 when the command could not be done (its message, no stack
 * unless it is a bug), 2 when the command line is wrong.
 */
import { basename } from 'node:path';
import { shellWord } from './cli/output.ts';
import { runCli } from './cli/program.ts';

/** How the person started the CLI, for the commands it prints: the installed `flashbulb`, or node and this file. */
function invokedAs(): string {
  const script = process.argv[1] ?? '';
  return basename(script) === 'flashbulb' ? 'flashbulb' : `node ${shellWord(script)}`;
}

runCli(process.argv.slice(2), invokedAs()).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // Operational errors print their message; programming errors (TypeError…) their stack.
    const bug =
      err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError;
    const text =
      err instanceof Error ? (bug ? (err.stack ?? err.message) : err.message) : String(err);
    process.stderr.write(`flashbulb: ${text}\n`);
    process.exit(1);
  },
);
