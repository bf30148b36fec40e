/**
 * The key file, auth.json, when the disk is full or the file is broken.
 *
 * Workspaces and keys on a full disk (/dev/full stands in: `auth.json.tmp` points there, so the
 * write fails with ENOSPC): a change the file did not take is no change at all, the error says
 * why, and no temporary file is left. Found by filling a tmpfs under a running server: creating
 * a workspace answered 500 `internal_error`, left `auth.json.tmp`, and kept the workspace in
 * memory only; a revoked key went on authenticating.
 */
import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuthStore } from '../../src/auth/store.ts';
import { writeFileDurably } from '../../src/files/durable.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flashbulb-auth-full-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const diskFull = (): void => symlinkSync('/dev/full', join(dir, 'auth.json.tmp'));
const refused = {
  code: 'unavailable',
  message:
    'storage failure: cannot write auth.json: ENOSPC: no space left on device, write; nothing was changed',
};

describe('auth store on a full disk', () => {
  it('refuses each change as a storage failure and keeps what it had, in memory and on disk', () => {
    const store = new AuthStore(dir);
    store.ensureWorkspace('default');
    store.createWorkspace('other');
    const { apiKey, info } = store.createKey({
      workspace: 'default',
      role: 'workspace',
      label: 'ci',
    });
    const onDisk = readFileSync(join(dir, 'auth.json'), 'utf8');

    diskFull();
    expect(() => store.createWorkspace('acme')).toThrow(expect.objectContaining(refused));
    expect(store.workspace('acme')).toBeUndefined();
    diskFull();
    expect(() => store.revokeKey(info.key_id)).toThrow(expect.objectContaining(refused));
    expect(store.authenticate(apiKey)).toMatchObject({ keyId: info.key_id });
    expect(store.keys().map((k) => k.key_id)).toEqual([info.key_id]);
    diskFull();
    expect(() => store.updateWorkspace('default', { default_ttl_s: 60 })).toThrow(
      expect.objectContaining(refused),
    );
    expect(store.workspace('default')?.default_ttl_s).toBeUndefined();
    diskFull();
    expect(() => store.createKey({ workspace: 'default', role: 'admin' })).toThrow(
      expect.objectContaining(refused),
    );
    expect(store.keys()).toHaveLength(1);
    diskFull();
    expect(() => store.deleteWorkspace('other')).toThrow(expect.objectContaining(refused));
    expect(store.workspace('other')).toBeDefined();
    expect(readFileSync(join(dir, 'auth.json'), 'utf8')).toBe(onDisk);
    expect(readdirSync(dir).sort()).toEqual(['auth.json']); // no temporary file left

    // Room again: the same changes go through.
    expect(store.revokeKey(info.key_id).key_id).toBe(info.key_id);
    expect(store.authenticate(apiKey)).toBeNull();
  });

  it('writeFileDurably names the file, keeps the error code, and leaves the old content and no temporary file', () => {
    const path = join(dir, 'meta.json');
    writeFileDurably(path, 'old');
    symlinkSync('/dev/full', `${path}.tmp`);
    expect(() => writeFileDurably(path, 'new')).toThrow(
      expect.objectContaining({
        code: 'ENOSPC',
        message: `cannot write ${path}: ENOSPC: no space left on device, write`,
      }),
    );
    expect(readFileSync(path, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['meta.json']);
  });
});

describe('auth store: a broken key file', () => {
  it('stops start-up naming the file and what is wrong', () => {
    const path = join(dir, 'auth.json');
    writeFileSync(path, '{ "format": 1, "workspaces": [');
    expect(() => new AuthStore(dir)).toThrow(new RegExp(`^cannot read ${path}: .*JSON`));
    writeFileSync(path, '[]');
    expect(() => new AuthStore(dir)).toThrow(`cannot read ${path}: not a Flashbulb key file`);
  });

  it('a hand edit gone wrong while the server runs is reported once; the keys read before stay in force until the file is fixed', () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const store = new AuthStore(dir);
      store.ensureWorkspace('default');
      const { apiKey } = store.createKey({ workspace: 'default', role: 'admin' });
      const path = join(dir, 'auth.json');
      const good = readFileSync(path, 'utf8');
      appendFileSync(path, '{ oops');
      utimesSync(path, new Date(), new Date(Date.now() + 5_000));
      store.reload(Date.now() + 2_000);
      store.reload(Date.now() + 4_000);
      expect(store.authenticate(apiKey)).not.toBeNull();
      expect(errors.mock.calls.map((c) => String(c[0]))).toEqual([
        expect.stringMatching(
          new RegExp(`^cannot read ${path}: .*; the workspaces and keys read before stay in force`),
        ),
      ]);

      // Fixed by hand: a file without that key, read on the next check.
      writeFileSync(path, JSON.stringify({ ...JSON.parse(good), keys: [] }));
      utimesSync(path, new Date(), new Date(Date.now() + 10_000));
      store.reload(Date.now() + 6_000);
      expect(store.authenticate(apiKey)).toBeNull();
    } finally {
      errors.mockRestore();
    }
  });
});
