/**
 * @module cli/mcp-stdio — `flashbulb mcp`: MCP over stdin/stdout for clients that start a command.
 * Two modes. Relay (FLASHBULB_URL set): every message goes to the server's /mcp over Streamable
 * HTTP with FLASHBULB_API_KEY, so the tools and their workspace are exactly the server's.
 * Embedded (no URL): a Flashbulb instance runs in this process on the data directory, and the
 * tools act in its default workspace (or `--workspace`). stdout carries only protocol messages;
 * logs go to stderr. Messages on stdin are read by mcp/stdio (a message over its limit is answered
 * with an error, and reading goes on); the command ends with 0 when the client closes stdin, and
 * otherwise says why on stderr and ends with 1.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { startApp } from '../app.ts';
import { ANONYMOUS_ADMIN, DEFAULT_WORKSPACE } from '../auth/principal.ts';
import type { Config } from '../config/index.ts';
import { resolveCtx } from '../verbs/context.ts';
import { connectGuarded } from '../mcp/guard.ts';
import { createMcpServer } from '../mcp/server.ts';
import { LineTransport } from '../mcp/stdio.ts';

/** Relays stdio to `${url}/mcp` (or `${url}/v1/workspaces/<slug>/mcp`); resolves with the exit status once stdin closes. */
export async function relayStdio(
  config: Config,
  opts: { workspace?: string | undefined } = {},
): Promise<number> {
  const path = opts.workspace ? `/v1/workspaces/${encodeURIComponent(opts.workspace)}/mcp` : '/mcp';
  const headers: Record<string, string> =
    config.apiKey === '' ? {} : { authorization: `Bearer ${config.apiKey}` };
  const remote = new StreamableHTTPClientTransport(new URL(path, `${config.url}/`), {
    requestInit: { headers },
  });
  const local = new LineTransport();
  local.onerror = (err) => process.stderr.write(`flashbulb mcp: ${err.message}\n`);
  const initializing = new Set<RequestId>();
  const closed = new Promise<void>((resolve) => {
    local.onclose = () => resolve();
  });
  remote.onmessage = (msg) => {
    // The remote answers initialize with the protocol version; later requests must carry it.
    if (isJSONRPCResultResponse(msg) && initializing.delete(msg.id)) {
      const version = msg.result['protocolVersion'];
      if (typeof version === 'string') remote.setProtocolVersion(version);
    }
    void local.send(msg);
  };
  remote.onerror = (err) => process.stderr.write(`flashbulb mcp: ${err.message}\n`);
  local.onmessage = (msg: JSONRPCMessage) => {
    if (isJSONRPCRequest(msg) && msg.method === 'initialize') initializing.add(msg.id);
    remote.send(msg).catch((err: unknown) => {
      const message = `${config.url}${path}: ${err instanceof Error ? err.message : String(err)}`;
      process.stderr.write(`flashbulb mcp: ${message}\n`);
      if (isJSONRPCRequest(msg))
        void local.send({ jsonrpc: '2.0', id: msg.id, error: { code: -32000, message } });
    });
  };
  await remote.start();
  await local.start();
  closeOnEnd(() => local.close());
  await closed;
  await remote.close();
  return exitStatus(local);
}

/** Runs Flashbulb in this process on the configured data directory and serves MCP on stdio; resolves with the exit status. */
export async function embeddedStdio(
  config: Config,
  opts: { workspace?: string | undefined } = {},
): Promise<number> {
  // Embedded: the listeners are private to this process.
  const app = await startApp({ ...config, bind: '127.0.0.1', httpPort: 0, grpcPort: 0 });
  const ctx = resolveCtx(app.svc, ANONYMOUS_ADMIN, opts.workspace ?? DEFAULT_WORKSPACE, {
    strict: true,
  });
  const server = createMcpServer(ctx);
  const transport = new LineTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await connectGuarded(server, transport);
  // After connect: the SDK's server sets its own onerror, which would not say it on stderr.
  transport.onerror = (err) => process.stderr.write(`flashbulb mcp: ${err.message}\n`);
  closeOnEnd(() => server.close());
  await closed;
  await app.stop();
  return exitStatus(transport);
}

/** 0 when the client closed stdin (or a signal ended the session); else says why, and 1. */
function exitStatus(transport: LineTransport): number {
  if (transport.endedBy === null) return 0;
  process.stderr.write(`flashbulb mcp: ending: ${transport.endedBy}\n`);
  return 1;
}

/** The client ends the session by closing stdin (or by a signal); the SDK's transport does not watch for that. */
function closeOnEnd(close: () => Promise<void>): void {
  const stop = (): void => void close();
  process.stdin.once('end', stop);
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
