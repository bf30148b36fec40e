/**
 * A list page bounded in bytes (ListInput.maxBytes, the verb's reply budget): a page of large
 * memories stops before the one that would take it past the bound, holds at least one, and its
 * cursor goes on from there, in creation order and by value; every memory comes back once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryView } from '../../src/model/memory.ts';
import { replyBytes } from '../../src/model/json-size.ts';
import type { ListInput } from '../../src/protocol/shard.ts';
import { Shard } from '../../src/shard/shard.ts';

const DIM = 8;
const N = 30;
const KB = 'x'.repeat(1024);
let dir = '';
let shard: Shard;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fb-list-bytes-'));
  shard = new Shard({
    shard: 0,
    dir,
    durability: 'os',
    snapshotIntervalS: 3600,
    snapshotWalBytes: 1 << 30,
    eraseWithinS: 60,
  });
  for (let i = 0; i < N; i++) {
    const embedding = new Float32Array(DIM);
    embedding[i % DIM] = 1;
    // 1 to 10 KB each, unevenly, so that pages cut at different counts.
    await shard.handle('remember', 'w', {
      items: [
        {
          content: `memory ${i} ${KB.repeat(1 + ((i * 7) % 10))}`,
          importance: (i % 10) / 10,
          context: {},
          entityId: null,
          kind: 'episode',
          embedding,
          edges: [],
        },
      ],
    });
  }
});
afterAll(async () => {
  await shard.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

const BASE: ListInput = {
  entityId: null,
  kind: null,
  cursor: null,
  limit: 1000,
  includeSuperseded: false,
};

async function pages(input: Partial<ListInput>): Promise<MemoryView[][]> {
  const out: MemoryView[][] = [];
  let cursor: string | null = null;
  do {
    const page: { memories: MemoryView[]; nextCursor: string | null } = await shard.handle(
      'list',
      'w',
      { ...BASE, ...input, cursor },
    );
    out.push(page.memories);
    cursor = page.nextCursor;
  } while (cursor !== null && out.length < 100);
  return out;
}

describe('a list page bounded in bytes', () => {
  for (const sort of ['created_at', 'importance'] as const) {
    it(`stops at the bound and goes on by its cursor (sort ${sort})`, async () => {
      const whole = (await pages({ sort, order: 'desc' })).flat();
      expect(whole).toHaveLength(N);
      const bound = 25 * 1024;
      const cut = await pages({ sort, order: 'desc', maxBytes: bound });
      expect(cut.length).toBeGreaterThan(3);
      // The same memories in the same order, each once.
      expect(cut.flat().map((m) => m.id)).toEqual(whole.map((m) => m.id));
      for (const page of cut) {
        expect(page.length).toBeGreaterThan(0);
        const bytes = page.reduce((n, m) => n + replyBytes(m) + 1, 0);
        expect(bytes).toBeLessThanOrEqual(bound);
      }
      // A page holds as many as fit: the next page's first memory would not have.
      for (let i = 0; i + 1 < cut.length; i++) {
        const page = cut[i] as MemoryView[];
        const bytes = page.reduce((n, m) => n + replyBytes(m) + 1, 0);
        expect(bytes + replyBytes((cut[i + 1] as MemoryView[])[0]) + 1).toBeGreaterThan(bound);
      }
    });
  }

  it('holds one memory larger than the bound alone (the reply budget decides it)', async () => {
    const cut = await pages({ maxBytes: 100 });
    expect(cut).toHaveLength(N);
    for (const page of cut) expect(page).toHaveLength(1);
  });

  it('leaves limit in charge when everything fits', async () => {
    const cut = await pages({ limit: 7, maxBytes: 1 << 30 });
    expect(cut.map((p) => p.length)).toEqual([7, 7, 7, 7, 2]);
  });
});
