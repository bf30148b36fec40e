import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkEmbedder,
  embedderRecord,
  openDataDir,
  type EmbedderRecord,
} from '../../src/data-dir.ts';

const fresh = (): string => mkdtempSync(join(tmpdir(), 'fb-embedder-'));
const model = (name: string, bytes: string): EmbedderRecord => {
  const dir = join(fresh(), name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'model.onnx'), bytes);
  return embedderRecord(name, 384, dir);
};

describe('the data directory records its embedder', () => {
  it('records the embedder on first start and accepts it again', () => {
    const dir = fresh();
    const bge = model('bge-small-en-v1.5', 'graph A');
    const meta = checkEmbedder(dir, openDataDir(dir, 1), bge, false);
    expect(meta.embedder).toEqual(bge);
    const again = openDataDir(dir, 1);
    expect(again.embedder).toEqual(bge);
    expect(checkEmbedder(dir, again, bge, true)).toEqual(again);
  });

  it('refuses another model, naming both and the way across', () => {
    const dir = fresh();
    checkEmbedder(dir, openDataDir(dir, 1), model('bge-small-en-v1.5', 'graph A'), false);
    const other = model('bge-small-en-v1.5', 'graph B'); // same name, other weights
    expect(() => checkEmbedder(dir, openDataDir(dir, 1), other, true)).toThrow(
      /holds vectors made by bge-small-en-v1\.5 .*this server embeds with bge-small-en-v1\.5 .*\/v1\/import/s,
    );
    expect(() =>
      checkEmbedder(dir, openDataDir(dir, 1), embedderRecord('hash', 384, null), false),
    ).toThrow(/this server embeds with hash \(384 dims\)/);
    expect(openDataDir(dir, 1).embedder?.model_sha256).toBe(model('x', 'graph A').model_sha256); // the record is unchanged
  });

  it('a directory from before the record: the earlier default is assumed when it holds memories', () => {
    const dir = fresh();
    expect(() =>
      checkEmbedder(dir, openDataDir(dir, 1), model('bge-small-en-v1.5', 'graph A'), true),
    ).toThrow(/embedded by the default model then, all-MiniLM-L6-v2.*"embedder":/s);
    expect(JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'))).not.toHaveProperty('embedder');
    const minilm = model('all-MiniLM-L6-v2', 'graph M');
    expect(checkEmbedder(dir, openDataDir(dir, 1), minilm, true).embedder).toEqual(minilm);
  });

  it('a directory from before the record that holds nothing takes any embedder', () => {
    const dir = fresh();
    const bge = model('bge-small-en-v1.5', 'graph A');
    expect(checkEmbedder(dir, openDataDir(dir, 1), bge, false).embedder).toEqual(bge);
  });
});

describe('the data directory description, meta.json', () => {
  it('one that cannot be read stops start-up naming the file and what is wrong', () => {
    const dir = fresh();
    const path = join(dir, 'meta.json');
    writeFileSync(path, '{"format": 1, "shar');
    expect(() => openDataDir(dir, 1)).toThrow(new RegExp(`^cannot read ${path}: .*JSON`));
    writeFileSync(path, 'null');
    expect(() => openDataDir(dir, 1)).toThrow(
      `${path} is not a Flashbulb data directory description`,
    );
  });
});
