/**
 * @module mcp/results — a tool's result as MCP sends it: once (issue 48). The result is the
 * `structuredContent`; the text `content` is the same JSON while it is short (the specification
 * says a tool with structured content SHOULD also return the serialised JSON as text: at this
 * size that costs nothing), and past FULL_TEXT_BYTES a short summary instead, so a large result
 * is not sent twice (SHOULD, not MUST: the specification allows it). Over Streamable HTTP a large
 * result's text is built in slices (api/json-slices) and stands in the SDK's message as a small
 * placeholder object that `RawResults.splice` replaces in the reply text, so the SDK never
 * stringifies a large result on the router thread.
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { jsonParts } from '../api/json-slices.ts';
import { replyBytes } from '../model/json-size.ts';
import { wellFormedJson } from '../model/unicode.ts';

/** A result up to this size (JSON bytes) is also sent whole as text. */
export const FULL_TEXT_BYTES = 4096;
/** The summary lists this many items of each list, each cut to ITEM_CHARS, in all at most SUMMARY_CHARS. */
const SUMMARY_ITEMS = 20;
const ITEM_CHARS = 160;
const SUMMARY_CHARS = 4096;

/** Large results' text, held while the SDK handles placeholders for them (one per HTTP request). */
export class RawResults {
  /** Random per request: no text in a reply can name another request's placeholder. */
  readonly #mark = `__flashbulb_result_${randomBytes(8).toString('hex')}_`;
  readonly #parts = new Map<string, readonly Buffer[]>();

  /** A placeholder for `structuredContent` that stands for `parts` in the reply text. */
  hold(parts: readonly Buffer[]): Record<string, unknown> {
    const key = `${this.#mark}${this.#parts.size}`;
    this.#parts.set(key, parts);
    return { [key]: 0 };
  }

  /** The reply text in parts, each placeholder replaced by the text it stands for. */
  splice(text: string): Array<string | Buffer> {
    if (this.#parts.size === 0) return [text];
    const out: Array<string | Buffer> = [];
    let at = 0;
    for (const m of text.matchAll(new RegExp(`\\{"(${this.#mark}\\d+)":0\\}`, 'g'))) {
      const parts = this.#parts.get(m[1] as string);
      if (parts === undefined) continue;
      out.push(text.slice(at, m.index), ...parts);
      at = m.index + m[0].length;
    }
    out.push(text.slice(at));
    return out.filter((p) => p.length > 0);
  }
}

/** A tool's successful result, sent once (see the module comment). */
export async function toolResult(
  result: Record<string, unknown>,
  raw: RawResults | null,
): Promise<CallToolResult> {
  if (replyBytes(result, FULL_TEXT_BYTES) <= FULL_TEXT_BYTES)
    return { content: [{ type: 'text', text: wellFormedJson(result) }], structuredContent: result };
  if (raw === null)
    return {
      content: [{ type: 'text', text: summarize(result, null) }],
      structuredContent: result,
    };
  const parts = await jsonParts(result, Infinity);
  const bytes = parts.reduce((n, p) => n + p.length, 0);
  return {
    content: [{ type: 'text', text: summarize(result, bytes) }],
    structuredContent: raw.hold(parts),
  };
}

/** A few lines a model can read: each field, and the first items of each list. */
export function summarize(result: Record<string, unknown>, bytes: number | null): string {
  const lines = [
    `The whole result (${bytes === null ? 'large' : `${bytes} bytes of JSON`}) is in structuredContent; in short:`,
  ];
  for (const [key, value] of Object.entries(result)) {
    if (!Array.isArray(value)) {
      lines.push(
        `${key}: ${clip(typeof value === 'string' ? value : String(JSON.stringify(value)))}`,
      );
      continue;
    }
    lines.push(`${key}: ${value.length}`);
    for (const item of value.slice(0, SUMMARY_ITEMS)) lines.push(`- ${describeItem(item)}`);
    if (value.length > SUMMARY_ITEMS) lines.push(`- … and ${value.length - SUMMARY_ITEMS} more`);
  }
  const text = lines.join('\n');
  return text.length <= SUMMARY_CHARS ? text : `${text.slice(0, SUMMARY_CHARS - 1)}…`;
}

/** A memory or a hit (its memory, its score) in one line; anything else as short JSON. */
function describeItem(item: unknown): string {
  if (typeof item !== 'object' || item === null)
    return clip(typeof item === 'string' ? item : String(item));
  const hit = item as Record<string, unknown>;
  const memory = (
    typeof hit['memory'] === 'object' && hit['memory'] !== null ? hit['memory'] : hit
  ) as Record<string, unknown>;
  const id = typeof memory['memory_id'] === 'string' ? memory['memory_id'] : null;
  const content = typeof memory['content'] === 'string' ? memory['content'] : null;
  if (id === null && content === null) return clip(JSON.stringify(item));
  const score = typeof hit['score'] === 'number' ? ` (score ${hit['score'].toFixed(3)})` : '';
  return `${id ?? '?'}${score}: ${clip(content ?? '')}`;
}

function clip(text: string): string {
  const line = text
    .slice(0, ITEM_CHARS * 4)
    .replace(/\s+/g, ' ')
    .trim();
  return line.length > ITEM_CHARS ? `${line.slice(0, ITEM_CHARS - 1)}…` : line;
}
