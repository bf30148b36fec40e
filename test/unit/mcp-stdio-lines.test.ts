/**
 * The stdio transport of `flashbulb mcp` (mcp/stdio): a message over its limit is answered with a
 * JSON-RPC error carrying the request's id and naming the limit, without being held in memory,
 * and reading goes on; lines that are not JSON-RPC are answered too; the transport says why it
 * ended (null: stdin ended).
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LineTransport } from '../../src/mcp/stdio.ts';
import { until } from '../helpers/wait.ts';

function harness(max: number): {
  t: LineTransport;
  stdin: PassThrough;
  stdout: PassThrough;
  got: unknown[];
  out: () => any[];
  errors: string[];
} {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (d: Buffer) => (text += d.toString()));
  const t = new LineTransport({ stdin, stdout, maxMessageBytes: max });
  const got: unknown[] = [];
  const errors: string[] = [];
  t.onmessage = (m) => got.push(m);
  t.onerror = (e) => errors.push(e.message);
  return {
    t,
    stdin,
    stdout,
    got,
    errors,
    out: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

const call = (id: unknown, filler: string, idLast = false): string => {
  const params = { name: 'remember', arguments: { content: filler, id: 'not-this-one' } };
  return JSON.stringify(
    idLast
      ? { jsonrpc: '2.0', method: 'tools/call', params, id }
      : { jsonrpc: '2.0', id, method: 'tools/call', params },
  );
};

describe('LineTransport', () => {
  it('answers an oversized message with an error carrying its id, and reads on', async () => {
    const h = harness(1024);
    await h.t.start();
    const big = 'x'.repeat(5000);
    // Sent in pieces, as a pipe delivers it; the id comes first, last, as a string, and not at all.
    for (const line of [
      call(7, big),
      call('req-8', big, true),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/x', params: { big } }),
      call(9, 'small'),
    ]) {
      for (let i = 0; i < line.length; i += 700) h.stdin.write(line.slice(i, i + 700));
      h.stdin.write('\n');
    }
    await until(() => h.got.length === 1 && h.out().length === 3, {
      what: 'two refusals, one unknown id, one message',
    });
    const [a, b, c] = h.out();
    expect(a).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600 } });
    expect(a.error.message).toMatch(/over the limit of 1024 bytes a message on stdio may have/);
    // The size named is the whole message's, not the bytes read when it passed the limit.
    expect(a.error.message).toContain(`the message of ${Buffer.byteLength(call(7, big))} bytes`);
    expect(b).toMatchObject({ id: 'req-8', error: { code: -32600 } });
    expect(c).toMatchObject({ id: null, error: { code: -32600 } });
    expect(h.got).toEqual([JSON.parse(call(9, 'small'))]);
    expect(h.errors).toHaveLength(3);
  });

  it('answers a line that is not JSON, or not JSON-RPC, and reads on', async () => {
    const h = harness(1 << 20);
    await h.t.start();
    h.stdin.write('not json\n{"id": 3, "hello": true}\n\n');
    h.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping' })}\r\n`);
    await until(() => h.got.length === 1 && h.out().length === 2, {
      what: 'two answers and a message',
    });
    expect(h.out().map((m) => [m.id, m.error.code])).toEqual([
      [null, -32700],
      [3, -32600],
    ]);
  });

  it('ends with no reason when stdin ends, and with one when stdout fails', async () => {
    const ended = harness(1024);
    let closed = false;
    ended.t.onclose = () => (closed = true);
    await ended.t.start();
    ended.stdin.end();
    await until(() => closed, { what: 'close' });
    expect(ended.t.endedBy).toBeNull();
    const broken = harness(1024);
    await broken.t.start();
    broken.stdout.emit('error', new Error('EPIPE: broken pipe'));
    expect(broken.t.endedBy).toBe('stdout failed: EPIPE: broken pipe');
  });
});
