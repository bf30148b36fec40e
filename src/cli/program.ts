/**
 * @module cli/program — the `flashbulb` command line, parsed by commander: every command with its
 * options and help. `flashbulb help <command…>`, `<command> --help` and `--version` answer on
 * stdout (exit 0); a wrong command line gets one line naming what is wrong and then the command's
 * usage (exit 2), never a stack trace. The work of each command is in the modules beside this one;
 * the environment is read only by config/ (`--data-dir`, `--url` and `--key` are overrides).
 */
import { resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { loadConfig, type Config } from '../config/index.ts';
import { VERSION } from '../config/version.ts';
import { UsageError } from './output.ts';
import { backupAndReport, exportCommand, importAndReport } from './remote.ts';

// The server and the key stores load only for the commands that use them (`--version` and help stay quick).
const server = (): Promise<typeof import('./server.ts')> => import('./server.ts');
const offline = (): Promise<typeof import('./offline.ts')> => import('./offline.ts');

interface DirOptions {
  dataDir?: string;
  json?: boolean;
  init?: boolean;
}

interface RemoteOptions {
  workspace?: string;
  url?: string;
  key?: string;
  json?: boolean;
}

const DATA_DIR =
  'the data directory (default: FLASHBULB_DATA_DIR, else ./snapshots in the current directory)';
const JSON_OUT = 'print JSON (for scripts) instead of text';
const INIT =
  'start a new data directory if it holds no Flashbulb data yet (otherwise that is refused)';
const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };

/** Parses `argv` (the words after `flashbulb`) and runs the command; resolves to the exit code. */
export async function runCli(argv: readonly string[], invokedAs: string): Promise<number> {
  const result = { code: 0 };
  const program = build(invokedAs, result);
  // `flashbulb` alone, or a group alone (`flashbulb keys`): its help, as a request for it.
  const group = program.commands.find((c) => c.name() === argv[0] && c.commands.length > 0);
  if (argv.length === 0 || (argv.length === 1 && group)) {
    (group ?? program).outputHelp();
    return 0;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return result.code;
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    return ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(err.code)
      ? 0
      : 2;
  }
}

function build(invokedAs: string, result: { code: number }): Command {
  /** A command's action: its exit code kept; our own checks of a command line (UsageError) end like commander's. */
  const act = <A extends unknown[]>(work: (...args: A) => Promise<number> | number) =>
    async function action(this: Command, ...args: A): Promise<void> {
      try {
        result.code = await work(...args);
      } catch (err) {
        if (err instanceof UsageError)
          this.error(err.message, { exitCode: 2, code: 'flashbulb.usage' });
        throw err;
      }
    };
  const program = new Command('flashbulb')
    .description('Flashbulb: a low-latency memory service for AI agents (REST, gRPC, MCP).')
    .version(VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .addHelpText(
      'after',
      `
Configuration comes from FLASHBULB_* environment variables (the docs' configuration page); the options
above override a few of them. "flashbulb help <command>" shows a command's options.`,
    );

  program
    .command('serve')
    .description(
      'run the server: REST, the dashboard and MCP on FLASHBULB_HTTP_PORT (6381), gRPC on FLASHBULB_GRPC_PORT (6380)',
    )
    .option('--data-dir <dir>', DATA_DIR)
    .action(act(async (o: DirOptions) => (await server()).serve(config(o), invokedAs)));

  program
    .command('mcp')
    .description(
      'MCP on stdin/stdout: relayed to FLASHBULB_URL with FLASHBULB_API_KEY, or run embedded on the data directory',
    )
    .option(
      '--workspace <slug>',
      "the workspace the tools work in (default: the key's, or default)",
    )
    .option(
      '--data-dir <dir>',
      'run embedded on this data directory even when FLASHBULB_URL is set',
    )
    .action(
      act(async (o: DirOptions & { workspace?: string }) =>
        (await server()).mcp(config(o), o.workspace, o.dataDir !== undefined),
      ),
    );

  const keys = program
    .command('keys')
    .description(
      'make, list and revoke API keys (in the data directory, the server running or not; with FLASHBULB_NATS_URL, in the cluster)',
    );
  keys
    .command('create')
    .description('make an API key and print it (once: only its hash is stored)')
    .addOption(
      new Option(
        '--role <role>',
        'admin: every workspace and the admin routes; workspace: one workspace',
      )
        .choices(['admin', 'workspace'])
        .default('workspace'),
    )
    .option('--workspace <slug>', 'the workspace of a workspace key', 'default')
    .option('--label <text>', 'a note shown in key lists')
    .option('--data-dir <dir>', DATA_DIR)
    .option('--init', INIT)
    .option('--json', JSON_OUT)
    .addHelpText(
      'after',
      `
Examples:
  export FLASHBULB_API_KEY=$(flashbulb keys create --role admin)
  flashbulb keys create --workspace acme --label "support bot" --data-dir /var/lib/flashbulb`,
    )
    .action(
      act(
        async (
          o: DirOptions & { role: 'admin' | 'workspace'; workspace: string; label?: string },
        ) => (await offline()).keysCreate(config(o), o),
      ),
    );
  keys
    .command('list')
    .description('list the keys (their ids, never the keys)')
    .option('--data-dir <dir>', DATA_DIR)
    .option('--json', JSON_OUT)
    .action(act(async (o: DirOptions) => (await offline()).keysList(config(o), o)));
  keys
    .command('revoke')
    .description(
      'revoke a key by its id (from keys list); a running server refuses it within a second',
    )
    .argument('<key-id>', "the key's id")
    .option('--data-dir <dir>', DATA_DIR)
    .option('--json', JSON_OUT)
    .action(
      act(async (id: string, o: DirOptions) => (await offline()).keysRevoke(config(o), id, o)),
    );

  const workspaces = program
    .command('workspaces')
    .description('list, create and delete workspaces (offline, like keys)');
  workspaces
    .command('list')
    .description('list the workspaces')
    .option('--data-dir <dir>', DATA_DIR)
    .option('--json', JSON_OUT)
    .action(act(async (o: DirOptions) => (await offline()).workspacesList(config(o), o)));
  workspaces
    .command('create')
    .description('create a workspace and a key for it (printed once)')
    .argument('<slug>', 'its name in URLs: lower-case letters, digits and -')
    .option('--name <text>', 'a display name (default: the slug)')
    .option(
      '--default-ttl <seconds>',
      'memories written without a TTL expire this long after they are made',
      seconds,
    )
    .option('--data-dir <dir>', DATA_DIR)
    .option('--init', INIT)
    .option('--json', JSON_OUT)
    .action(
      act(async (slug: string, o: DirOptions & { name?: string; defaultTtl?: number }) =>
        (await offline()).workspacesCreate(config(o), slug, o),
      ),
    );
  workspaces
    .command('delete')
    .description(
      'delete a workspace, its memories and its keys, the server stopped (a running one: DELETE /v1/workspaces/SLUG)',
    )
    .argument('<slug>', 'the workspace')
    .option('--data-dir <dir>', DATA_DIR)
    .option('--json', JSON_OUT)
    .action(
      act(async (slug: string, o: DirOptions) =>
        (await offline()).workspacesDelete(config(o), slug, o),
      ),
    );

  const remote = (cmd: Command): Command =>
    cmd
      .option(
        '--url <url>',
        'the server (default: FLASHBULB_URL, else http://127.0.0.1:$FLASHBULB_HTTP_PORT)',
      )
      .option('--key <key>', 'the API key (default: FLASHBULB_API_KEY)');
  remote(
    program
      .command('export')
      .description('write a workspace as NDJSON to stdout, from a running server')
      .option('--workspace <slug>', "the workspace (default: the key's)")
      .option('--embeddings', "include each memory's vector"),
  ).action(
    act(async (o: RemoteOptions & { embeddings?: boolean }) => {
      await exportCommand({ ...target(o), embeddings: o.embeddings ?? false }, io);
      return 0;
    }),
  );
  remote(
    program
      .command('import')
      .description(
        'send NDJSON from stdin (an export) to a running server; exit 1 when a line failed',
      )
      .option('--workspace <slug>', "the workspace (default: the key's)")
      .option('--json', JSON_OUT),
  ).action(
    act(async (o: RemoteOptions) => importAndReport({ ...target(o), json: o.json ?? false }, io)),
  );
  remote(
    program
      .command('backup')
      .description(
        "copy a running server's data directory, consistently, to a new directory on its machine",
      )
      .requiredOption(
        '--to <dir>',
        'the copy (a new or empty directory); restore with flashbulb serve --data-dir DIR',
      )
      .option('--json', JSON_OUT),
  ).action(
    act(async (o: RemoteOptions & { to: string }) =>
      backupAndReport({ ...target(o), to: resolve(o.to), json: o.json ?? false }, io),
    ),
  );

  program
    .command('repair')
    .description(
      'the server stopped: rewrite a damaged snapshot or log that stops start-up with every whole record in it',
    )
    .option('--data-dir <dir>', DATA_DIR)
    .option('--json', JSON_OUT)
    .action(act(async (o: DirOptions) => (await server()).repair(config(o).dataDir, o)));

  program
    .command('help')
    .description('show the help of a command')
    .argument('[command...]', 'the command, e.g. keys create')
    .action(
      act((words: string[]) => {
        let cmd = program;
        for (const word of words) {
          const next = cmd.commands.find((c) => c.name() === word);
          if (!next)
            throw new UsageError(`unknown command '${[...pathOf(cmd).slice(1), word].join(' ')}'`);
          cmd = next;
        }
        cmd.outputHelp();
        return 0;
      }),
    );

  for (const cmd of everyCommand(program)) settle(cmd);
  return program;
}

/** The environment's configuration with this command line's `--data-dir`. */
function config(o: DirOptions): Config {
  return loadConfig(undefined, o.dataDir === undefined ? {} : { dataDir: resolve(o.dataDir) });
}

function target(o: RemoteOptions): { config: Config; workspace: string | undefined } {
  const base = loadConfig();
  return {
    config: {
      ...base,
      serverUrl: o.url?.replace(/\/+$/, '') ?? base.serverUrl,
      apiKey: o.key ?? base.apiKey,
    },
    workspace: o.workspace,
  };
}

function seconds(text: string): number {
  const n = Number(text);
  if (!(Number.isFinite(n) && n > 0))
    throw new InvalidArgumentError('it must be a positive number of seconds.');
  return n;
}

function everyCommand(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(everyCommand)];
}

function pathOf(cmd: Command): string[] {
  return cmd.parent ? [...pathOf(cmd.parent), cmd.name()] : [cmd.name()];
}

/**
 * One command's usage line (its arguments and every option, so that the line after an error says
 * what the command takes), its error format and exit, and help on stdout.
 */
function settle(cmd: Command): void {
  if (cmd.commands.length > 0)
    cmd.usage(
      cmd.parent
        ? `<${cmd.commands.map((c) => c.name()).join('|')}> [options]`
        : '<command> [options]',
    );
  else {
    const args = cmd.registeredArguments.map((a) =>
      a.required ? `<${a.name()}>` : `[${a.name()}${a.variadic ? '...' : ''}]`,
    );
    const opts = cmd.options
      .filter((o) => o.long !== '--help')
      .map((o) => {
        const value = o.argChoices
          ? ` <${o.argChoices.join('|')}>`
          : (/ (<[^>]+>|\[[^\]]+\])$/.exec(o.flags)?.[0] ?? '');
        return o.mandatory ? `${o.long}${value}` : `[${o.long}${value}]`;
      });
    cmd.usage([...args, ...opts].join(' '));
  }
  cmd.helpCommand(false);
  cmd.exitOverride();
  cmd.showSuggestionAfterError(true);
  cmd.configureOutput({
    writeOut: (text) => process.stdout.write(text),
    writeErr: (text) => process.stderr.write(text),
    outputError: (text, write) =>
      write(
        `${pathOf(cmd).join(' ')}: ${tidy(text)}\nusage: ${pathOf(cmd).join(' ')} ${cmd.usage()}\n`,
      ),
  });
}

/** commander's message as one line: no `error: ` prefix, its suggestion in parentheses. */
function tidy(text: string): string {
  return text
    .trim()
    .replace(/^error: /, '')
    .replace(/\s*\n\(Did you mean (.+)\?\)$/, ' (did you mean $1?)')
    .replace(/\s*\n\s*/g, ' ');
}
