/**
 * @module mcp/stdio — MCP's stdio transport (newline-delimited JSON-RPC on stdin and stdout) for
 * `flashbulb mcp`, with a bound per message instead of the SDK's: the SDK's transport closed
 * itself on a message past its 10 MiB read buffer, and the relay then ended with status 0, the
 * message and everything in flight unanswered. Here a line past `maxMessageBytes` is not held:
 * its bytes are dropped as they arrive (only the request's top-level `id` is picked out of them),
 * it is answered with a JSON-RPC error naming the limit, and the transport reads on. A line that
 * is not a JSON-RPC message gets -32700 / -32600 and the transport reads on too. It ends when
 * stdin ends (`endedBy` null) or fails, or stdout fails (`endedBy` says why).
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  JSONRPCMessageSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';

/** The largest message read from stdin (its line, in bytes). */
export const STDIO_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

type Id = string | number | null;

export class LineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** Why the transport ended: null when stdin ended (the client closed it), else the failure. */
  endedBy: string | null = null;
  readonly #in: NodeJS.ReadableStream;
  readonly #out: NodeJS.WritableStream;
  readonly #max: number;
  #parts: Buffer[] = [];
  #size = 0;
  /** Set while an oversized line is being dropped: finds its top-level `id`. */
  #skipping: IdScanner | null = null;
  #closed = false;

  constructor(
    opts: {
      stdin?: NodeJS.ReadableStream;
      stdout?: NodeJS.WritableStream;
      maxMessageBytes?: number;
    } = {},
  ) {
    this.#in = opts.stdin ?? process.stdin;
    this.#out = opts.stdout ?? process.stdout;
    this.#max = opts.maxMessageBytes ?? STDIO_MAX_MESSAGE_BYTES;
  }

  async start(): Promise<void> {
    this.#in.on('data', this.#onData);
    this.#in.once('end', () => void this.close());
    this.#in.once('error', (err: Error) => this.#fail(`stdin failed: ${err.message}`));
    this.#out.on('error', (err: Error) => this.#fail(`stdout failed: ${err.message}`));
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.#out.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#out.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#in.off('data', this.#onData);
    this.#parts = [];
    this.onclose?.();
  }

  #fail(why: string): void {
    if (this.#closed) return;
    this.endedBy ??= why;
    void this.close();
  }

  readonly #onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (let nl = data.indexOf(10); ; nl = data.indexOf(10)) {
      const piece = nl < 0 ? data : data.subarray(0, nl);
      this.#take(piece);
      if (nl < 0) return;
      this.#endLine();
      data = data.subarray(nl + 1);
    }
  };

  /** Adds bytes to the current line, or to the scan of a line already over the limit. */
  #take(piece: Buffer): void {
    if (piece.length === 0) return;
    this.#size += piece.length;
    if (this.#skipping) return this.#skipping.scan(piece);
    if (this.#size <= this.#max) return void this.#parts.push(piece);
    this.#skipping = new IdScanner();
    for (const p of this.#parts) this.#skipping.scan(p);
    this.#skipping.scan(piece);
    this.#parts = [];
  }

  #endLine(): void {
    const skipped = this.#skipping;
    const size = this.#size;
    const line = skipped ? null : Buffer.concat(this.#parts).toString('utf8').replace(/\r$/, '');
    this.#parts = [];
    this.#size = 0;
    this.#skipping = null;
    if (skipped)
      return this.#refuse(
        skipped.id,
        ErrorCode.InvalidRequest,
        `the message of ${size} bytes is over the limit of ${this.#max} bytes a message on stdio may have (flashbulb mcp); it was not read`,
      );
    if (line === null || line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (err) {
      return this.#refuse(
        null,
        ErrorCode.ParseError,
        `Parse error: the line is not JSON (${(err as Error).message})`,
      );
    }
    const message = JSONRPCMessageSchema.safeParse(parsed);
    if (!message.success) {
      const id =
        typeof parsed === 'object' && parsed !== null ? (parsed as { id?: unknown }).id : undefined;
      return this.#refuse(
        typeof id === 'string' || typeof id === 'number' ? id : null,
        ErrorCode.InvalidRequest,
        'Invalid Request: the line is not a JSON-RPC 2.0 message',
      );
    }
    this.onmessage?.(message.data);
  }

  /** Answers a message that could not be read, says so on stderr (onerror), and reads on. */
  #refuse(id: Id, code: number, message: string): void {
    this.onerror?.(new Error(message));
    // A response carries the id of the request it answers; JSON-RPC says null when it is unknown.
    void this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}

/**
 * Finds the value of the top-level `"id"` member of a JSON object streamed through `scan`, byte
 * by byte, holding nothing but the member it is in (a long string is skipped, not kept).
 */
class IdScanner {
  id: Id = null;
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** The top-level key just read, and whether the next value belongs to "id". */
  #key: number[] | null = null;
  #keyDone: string | null = null;
  #value: number[] | null = null;
  #found = false;

  scan(bytes: Buffer): void {
    for (let i = 0; i < bytes.length && !this.#found; i++) this.#byte(bytes[i] as number);
  }

  #byte(b: number): void {
    if (this.#inString) {
      if (this.#key && this.#key.length < 64) this.#key.push(b);
      if (this.#value && this.#value.length < 1024) this.#value.push(b);
      if (this.#escaped) this.#escaped = false;
      else if (b === 0x5c) this.#escaped = true;
      else if (b === 0x22) {
        this.#inString = false;
        if (this.#key) {
          this.#keyDone = Buffer.from(this.#key.slice(0, -1)).toString('utf8');
          this.#key = null;
        } else if (this.#value) this.#finish();
      }
      return;
    }
    if (this.#value && this.#depth === 1 && (b === 0x2c || b === 0x7d)) return this.#finish();
    if (b === 0x22) {
      this.#inString = true;
      if (this.#depth === 1 && this.#keyDone === null && this.#value === null) this.#key = [];
      if (this.#value) this.#value.push(b);
    } else if (b === 0x7b || b === 0x5b) this.#depth += 1;
    else if (b === 0x7d || b === 0x5d) this.#depth -= 1;
    else if (b === 0x3a && this.#depth === 1 && this.#keyDone !== null) {
      if (this.#keyDone === 'id') this.#value = [];
      this.#keyDone = null;
    } else if (this.#value && b > 0x20) this.#value.push(b);
    else if (b === 0x2c && this.#depth === 1) this.#keyDone = null;
  }

  #finish(): void {
    try {
      const v = JSON.parse(Buffer.from(this.#value ?? []).toString('utf8')) as unknown;
      if (typeof v === 'string' || typeof v === 'number') this.id = v;
    } catch {
      /* not a valid id: answered with null */
    }
    this.#value = null;
    this.#found = true;
  }
}
