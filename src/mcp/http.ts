/**
 * @module mcp/http — MCP's Streamable HTTP transport on the REST port, stateless: every POST gets
 * a fresh server and transport for the caller's workspace and is answered with plain JSON
 * (`enableJsonResponse`), so no session state lives between requests and any replica can answer.
 * The SDK's web-standard transport speaks Request/Response; this file converts to and from the
 * REST server's request and reply. The calls of a batch run one at a time against the request's
 * reply budget, and large results are spliced into the reply text as parts (mcp/results).
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Ctx } from '../verbs/context.ts';
import { connectGuarded } from './guard.ts';
import { RawResults } from './results.ts';
import { createMcpServer } from './server.ts';

export interface McpHttpRequest {
  method: string;
  headers: ReadonlyMap<string, string>;
  body: Buffer;
}

export interface McpHttpReply {
  status: number;
  body: null;
  /** The reply text, in parts where large results were spliced in (mcp/results). */
  text: Array<string | Buffer>;
  headers: Record<string, string>;
}

const PASSED_HEADERS = ['content-type', 'accept', 'mcp-protocol-version', 'mcp-session-id'];

export async function serveMcp(ctx: Ctx, req: McpHttpRequest): Promise<McpHttpReply> {
  const raw = new RawResults();
  const server = createMcpServer(ctx, { raw });
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }); // no sessionIdGenerator: stateless;
  await connectGuarded(server, transport, { oneAtATime: true });
  try {
    const headers = new Headers();
    for (const name of PASSED_HEADERS) {
      const v = req.headers.get(name);
      if (v !== undefined) headers.set(name, v);
    }
    const request = new Request('http://flashbulb.local/mcp', {
      method: req.method,
      headers,
      body: new Uint8Array(req.body),
    });
    const response = await transport.handleRequest(request);
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    return {
      status: response.status,
      body: null,
      text: raw.splice(await response.text()),
      headers: out,
    };
  } finally {
    await server.close();
  }
}
