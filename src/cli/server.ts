/**
 * @module cli/server — the commands that run Flashbulb itself in this process: `serve` (until
 * SIGTERM or SIGINT, then a drain and a final snapshot), `mcp` on stdio (relayed or embedded),
 * and `repair` of a stopped server's damaged files.
 */
import { startApp } from '../app.ts';
import type { Config } from '../config/index.ts';
import { repairDataDir } from '../data-dir.ts';
import { embeddedStdio, relayStdio } from './mcp-stdio.ts';
import { count, note, printJson, printLine, shellWord, type Shown } from './output.ts';

/** Serves until a signal; `command` is how the person started the CLI, for the command start-up names. */
export async function serve(config: Config, command: string): Promise<number> {
  const keysCreate = `${command} keys create --role admin`;
  const app = await startApp(config, {
    lostKeyCommand:
      config.natsUrls.length > 0
        ? keysCreate
        : `${keysCreate} --data-dir ${shellWord(config.dataDir)}`,
  });
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      note(`${signal}: draining requests and writing a final snapshot…`);
      // The drain and the final snapshot each have the shutdown timeout; this ends whatever else might hang.
      setTimeout(
        () => {
          note(
            `flashbulb: shutdown did not finish within ${2 * config.shutdownTimeoutS + 5} s; exiting`,
          );
          process.exit(1);
        },
        (2 * config.shutdownTimeoutS + 5) * 1000,
      ).unref();
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await app.stop();
  note('stopped cleanly');
  return 0;
}

/** MCP on stdio: relayed to FLASHBULB_URL unless `embedded` (a data directory was named) or no URL is set. */
export async function mcp(
  config: Config,
  workspace: string | undefined,
  embedded: boolean,
): Promise<number> {
  if (config.url !== '' && !embedded) return relayStdio(config, { workspace });
  return embeddedStdio(config, { workspace });
}

export function repair(dir: string, opts: Shown): number {
  const repaired = repairDataDir(dir).map((r) => ({
    shard: r.shard,
    file: r.file,
    records_kept: r.kept,
    original_kept_as: r.original,
    dropped: r.dropped.map((d) => ({ offset: d.offset, bytes: d.bytes, reason: d.reason })),
  }));
  if (opts.json) printJson({ data_dir: dir, repaired });
  for (const r of opts.json ? [] : repaired) {
    const bytes = r.dropped.reduce((sum, d) => sum + d.bytes, 0);
    printLine(
      `shard ${r.shard}: ${r.file}: kept ${count(r.records_kept, 'record')}, dropped ${count(bytes, 'byte')} (${r.dropped.map((d) => `at ${d.offset}: ${d.reason}`).join('; ')}); the original is ${r.original_kept_as}`,
    );
  }
  note(
    repaired.length === 0
      ? `flashbulb: nothing damaged in ${dir}`
      : `flashbulb: ${count(repaired.length, 'file')} rewritten; the records in the dropped bytes are lost. Start the server; delete the .damaged originals once you no longer need them (they may hold forgotten content)`,
  );
  return 0;
}
