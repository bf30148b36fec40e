/**
 * @module native-bench/suite/server — the Flashbulb server the suite measures, as a child process
 * (native-bench/lib/server-process.ts): durable acks, auth on, rate limits and background
 * reflection off, REST and gRPC on fixed free ports so a restart keeps them.
 */
import { freePort, startServer, type RunningServer } from '../lib/server-process.ts';
import type { SuiteOptions } from './options.ts';

export interface SuiteServerConfig {
  dataDir: string;
  httpPort: number;
  grpcPort: number;
  env: Record<string, string>;
  nodeArgs: string[];
  cli: string | undefined;
  verbose: boolean;
}

export async function serverConfig(
  opts: SuiteOptions,
  dataDir: string,
): Promise<SuiteServerConfig> {
  const grpcPort = await freePort();
  return {
    dataDir,
    httpPort: await freePort(),
    grpcPort,
    env: {
      FLASHBULB_EMBEDDER: opts.embedder,
      FLASHBULB_DURABILITY: 'fsync',
      FLASHBULB_AUTH_ENABLED: 'true',
      FLASHBULB_RATE_LIMIT_WRITES: '0',
      FLASHBULB_RATE_LIMIT_READS: '0',
      // Background reflection would write insights and take CPU in the middle of phases.
      FLASHBULB_REFLECT_ENABLED: 'false',
      FLASHBULB_GRPC_PORT: String(grpcPort),
    },
    nodeArgs:
      opts.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`],
    cli: opts.cli,
    verbose: opts.verbose,
  };
}

/** Starts (or restarts, with the key it printed the first time) the server. */
export function startSuiteServer(cfg: SuiteServerConfig, apiKey?: string): Promise<RunningServer> {
  return startServer({
    dataDir: cfg.dataDir,
    port: cfg.httpPort,
    env: cfg.env,
    nodeArgs: cfg.nodeArgs,
    verbose: cfg.verbose,
    ...(cfg.cli === undefined ? {} : { cli: cfg.cli }),
    ...(apiKey === undefined ? {} : { apiKey }),
  });
}
