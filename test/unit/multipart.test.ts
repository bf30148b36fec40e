import { describe, expect, it } from 'vitest';
import { FlashbulbError } from '../../src/errors/codes.ts';
import { boundaryOf, parseMultipart } from '../../src/http/multipart.ts';

/** A body as Node's own fetch encoder (undici) writes it, with its Content-Type. */
async function encoded(form: FormData): Promise<{ body: Buffer; type: string }> {
  const response = new Response(form);
  return {
    body: Buffer.from(await response.arrayBuffer()),
    type: response.headers.get('content-type') ?? '',
  };
}

function errorOf(fn: () => unknown): FlashbulbError {
  try {
    fn();
  } catch (e) {
    if (e instanceof FlashbulbError) return e;
    throw e;
  }
  throw new Error('no error thrown');
}

describe('parseMultipart', () => {
  it('reads what fetch encodes: fields, files, UTF-8 names and binary data, in order', async () => {
    const binary = Buffer.from([0, 13, 10, 45, 45, 255, 13, 10, 13, 10, 1]);
    const form = new FormData();
    form.append('files', new Blob(['# Notes\r\nalpha\r\n--not a boundary\r\n']), 'notes/a.md');
    form.append('note', 'plain field');
    form.append('file', new Blob([binary]), 'dir/ünï "quoted".txt');
    const { body, type } = await encoded(form);
    const parts = parseMultipart(body, type);
    expect(parts?.map((p) => p.name)).toEqual(['files', 'note', 'file']);
    expect(parts?.[0]?.filename).toBe('notes/a.md');
    expect(parts?.[0]?.data.toString()).toBe('# Notes\r\nalpha\r\n--not a boundary\r\n');
    expect(parts?.[1]?.filename).toBeUndefined();
    expect(parts?.[1]?.data.toString()).toBe('plain field');
    expect(parts?.[2]?.data.equals(binary)).toBe(true);
    // undici percent-encodes the double quotes in a filename (as browsers do), and keeps UTF-8 as is.
    expect(parts?.[2]?.filename).toBe('dir/ünï %22quoted%22.txt');
  });

  it('takes a preamble, an epilogue, a quoted boundary, padding, a part without headers and an empty part', () => {
    const body = Buffer.from(
      'ignored preamble\r\n--a b:c \t\r\nContent-Disposition: form-data; name="files"; filename="x \\"y\\".md"\r\n' +
        'Content-Type: text/markdown\r\n\r\nX\r\n--a b:c\r\n\r\nno headers\r\n--a b:c\r\ncontent-disposition: form-data; name=empty\r\n\r\n' +
        '\r\n--a b:c--\r\nignored epilogue',
    );
    const parts = parseMultipart(body, 'Multipart/Form-Data; charset=utf-8; boundary="a b:c"');
    expect(parts).toEqual([
      { name: 'files', filename: 'x "y".md', data: Buffer.from('X') },
      { name: '', filename: undefined, data: Buffer.from('no headers') },
      { name: 'empty', filename: undefined, data: Buffer.alloc(0) },
    ]);
  });

  it('gives no parts for a body that is only the closing delimiter', () => {
    expect(parseMultipart(Buffer.from('--b--\r\n'), 'multipart/form-data; boundary=b')).toEqual([]);
  });

  it('answers null for other content types or a missing boundary', () => {
    expect(parseMultipart(Buffer.from('--b--'), 'application/json')).toBeNull();
    expect(parseMultipart(Buffer.from('--b--'), 'multipart/mixed; boundary=b')).toBeNull();
    expect(parseMultipart(Buffer.from('--b--'), 'multipart/form-data')).toBeNull();
    expect(boundaryOf(`multipart/form-data; boundary=${'x'.repeat(71)}`)).toBeNull();
    expect(boundaryOf(`multipart/form-data; boundary=${'x'.repeat(70)}`)).toBe('x'.repeat(70));
  });

  it('names what is wrong with a body that does not follow its boundary', () => {
    const type = 'multipart/form-data; boundary=b';
    expect(errorOf(() => parseMultipart(Buffer.from('just text'), type)).message).toMatch(
      /no "--b" delimiter/,
    );
    expect(errorOf(() => parseMultipart(Buffer.from('--bX\r\n'), type)).message).toMatch(
      /not followed by a line break/,
    );
    expect(
      errorOf(() =>
        parseMultipart(Buffer.from('--b\r\nContent-Disposition: form-data; name=a\r\n'), type),
      ).message,
    ).toMatch(/part 1's headers have no blank line/);
    const cut = errorOf(() =>
      parseMultipart(Buffer.from('--b\r\n\r\none\r\n--b\r\n\r\ntwo, cut short'), type),
    );
    expect(cut.code).toBe('invalid_input');
    expect(cut.message).toMatch(/ends inside part 2: no closing "--b--"/);
  });
});
