/**
 * Large replies are built in slices (issue 48, item 1): api/json-slices writes JSON.stringify's
 * text (lone surrogates repaired) in parts, giving the event loop a turn between slices; an MCP
 * tool's large result is sent once (mcp/results: structured content, a short text summary).
 */
import { describe, expect, it } from 'vitest';
import { jsonParts, nextSlice } from '../../src/api/json-slices.ts';
import { FULL_TEXT_BYTES, RawResults, summarize, toolResult } from '../../src/mcp/results.ts';
import { wellFormedJson } from '../../src/model/unicode.ts';

const memory = (i: number, size: number): Record<string, unknown> => ({
  memory_id: i.toString(16).padStart(32, '0'),
  content: `memory ${i} "quoted"\n${'x'.repeat(size)}`,
  context: { topic: 'tea', n: i, nested: { deep: [1, 2, { deeper: true }] } },
  entity_id: null,
  importance: 0.5,
  skipped: undefined,
  created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
});

describe('jsonParts', () => {
  it('writes exactly what JSON.stringify writes, for small and large values', async () => {
    const values: unknown[] = [
      { memories: [memory(1, 10)], next_cursor: null },
      {
        memories: Array.from({ length: 300 }, (_, i) => memory(i, 3000)),
        next_cursor: 'abc',
        list: [1, undefined, () => 1, 'x'],
      },
      [memory(2, 5000), null, 'text', 42, [[['deep']]]],
      'just a string',
      { lone: `broken \ud800 text`, ['key\udc00']: 1, big: 'y'.repeat(300_000) },
    ];
    for (const v of values) {
      for (const hint of [0, 1 << 30])
        expect(Buffer.concat(await jsonParts(v, hint)).toString()).toBe(wellFormedJson(v));
    }
  });

  it('gives way between slices: other work runs while a large reply is built', async () => {
    const big = { memories: Array.from({ length: 2000 }, (_, i) => memory(i, 8000)) };
    let turns = 0;
    let building = true;
    const tick = (): void => {
      turns += 1;
      if (building) setImmediate(tick);
    };
    setImmediate(tick);
    const parts = await jsonParts(big, 1 << 30);
    building = false;
    expect(parts.length).toBeGreaterThan(100);
    expect(turns).toBeGreaterThan(1);
  });

  it('runs one slice per turn of the event loop, whoever asks', async () => {
    // A ticker counts turns (it runs once in each check phase); two slices in one turn would see one count.
    let turn = 0;
    let ticking = true;
    const tick = (): void => {
      turn += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const slices: Array<{ job: string; turn: number }> = [];
    const job = async (name: string): Promise<void> => {
      for (let i = 0; i < 4; i++) {
        await nextSlice();
        slices.push({ job: name, turn });
      }
    };
    await Promise.all([job('a'), job('b'), job('c')]);
    ticking = false;
    expect(slices.map((s) => s.job).join('')).toBe('abcabcabcabc');
    for (let i = 1; i < slices.length; i++)
      expect(slices[i]?.turn).toBeGreaterThan(slices[i - 1]?.turn ?? Infinity);
  });
});

describe('MCP tool results', () => {
  it('sends a short result whole as text as well', async () => {
    const result = { memory_id: 'a'.repeat(32), content: 'short' };
    const out = await toolResult(result, new RawResults());
    expect(out.structuredContent).toBe(result);
    expect(JSON.parse((out.content as Array<{ text: string }>)[0]?.text ?? '')).toEqual(result);
  });

  it('sends a large result once: a summary as text, the JSON spliced into the reply text', async () => {
    const result = {
      memories: Array.from({ length: 50 }, (_, i) => memory(i, 2000)),
      next_cursor: 'c1',
    };
    const raw = new RawResults();
    const out = await toolResult(result, raw);
    const text = (out.content as Array<{ text: string }>)[0]?.text ?? '';
    expect(text.length).toBeLessThan(FULL_TEXT_BYTES + 100);
    expect(text).toMatch(/memories: 50/);
    expect(text).toMatch(/… and 30 more/);
    expect(text).toMatch(/next_cursor: c1/);
    // The SDK stringifies the message with the placeholder; the reply text has the result in its place.
    const message = JSON.stringify({ jsonrpc: '2.0', id: 1, result: out });
    expect(message.length).toBeLessThan(10_000);
    const reply = JSON.parse(
      Buffer.concat(raw.splice(message).map((p) => Buffer.from(p))).toString(),
    ) as { result: { structuredContent: unknown } };
    expect(reply.result.structuredContent).toEqual(JSON.parse(JSON.stringify(result)));
  });

  it('summarises hits by id, score and content, cut short', () => {
    const text = summarize(
      {
        results: [
          {
            memory: { memory_id: 'm1', content: `Alice   likes\ntea ${'z'.repeat(500)}` },
            score: 0.91234,
          },
        ],
        strategy_errors: [],
      },
      9000,
    );
    expect(text).toMatch(/^The whole result \(9000 bytes of JSON\) is in structuredContent/);
    expect(text).toMatch(/- m1 \(score 0\.912\): Alice likes tea z+…/);
    expect(text).toMatch(/strategy_errors: 0/);
  });
});
