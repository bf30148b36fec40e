/** fileContains: a string found wherever it lies in the file, across the reads it is split by, and not found when absent. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileContains } from '../../src/embedding/file-contains.ts';

const dir = mkdtempSync(join(tmpdir(), 'fb-contains-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, bytes: Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const NEEDLE = 'DynamicQuantizeLinear';
const filler = (n: number): Buffer => Buffer.alloc(n, 0x41);

describe('fileContains', () => {
  it('finds the string at the start, at the end and across every split point of a small read size', async () => {
    const chunk = 64;
    expect(
      await fileContains(
        file('start', Buffer.concat([Buffer.from(NEEDLE), filler(500)])),
        NEEDLE,
        chunk,
      ),
    ).toBe(true);
    expect(
      await fileContains(
        file('end', Buffer.concat([filler(500), Buffer.from(NEEDLE)])),
        NEEDLE,
        chunk,
      ),
    ).toBe(true);
    for (let at = chunk - NEEDLE.length; at <= chunk * 3; at++) {
      const path = file(`at-${at}`, Buffer.concat([filler(at), Buffer.from(NEEDLE), filler(70)]));
      expect(await fileContains(path, NEEDLE, chunk), `needle at byte ${at}`).toBe(true);
    }
  });

  it('does not find a string that is absent, or present only in part', async () => {
    expect(await fileContains(file('none', filler(1000)), NEEDLE, 64)).toBe(false);
    expect(
      await fileContains(
        file(
          'part',
          Buffer.concat([
            filler(60),
            Buffer.from(NEEDLE.slice(0, 10)),
            filler(60),
            Buffer.from(NEEDLE.slice(10)),
          ]),
        ),
        NEEDLE,
        64,
      ),
    ).toBe(false);
    expect(await fileContains(file('empty', Buffer.alloc(0)), NEEDLE)).toBe(false);
  });

  it('answers for the shipped model as the whole-file read did', async () => {
    const { DEFAULTS } = await import('../../src/config/index.ts');
    const model = join(DEFAULTS.FLASHBULB_MODEL_DIR, 'model.onnx');
    const { existsSync, readFileSync } = await import('node:fs');
    if (!existsSync(model)) return;
    expect(await fileContains(model, NEEDLE)).toBe(readFileSync(model).includes(NEEDLE));
  });
});
