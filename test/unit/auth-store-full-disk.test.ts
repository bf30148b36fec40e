/**
 * Workspaces and keys on a full disk (/dev/full stands in: `auth.json.tmp` points there, so the
 * write fails with ENOSPC): a change the file did not take is no change at all, the error says
 * why, and no temporary file is left. Found by filling a tmpfs under a running server: creating
 * a workspace answered 500 `internal_error`, left `auth.json.tmp`, and kept the workspace in
 * memory only; a revoked key went on authenticating.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthStore } from '../../src/auth/store.ts';
import { writeFileDurably } from '../../src/files/durable.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flashbulb-auth-full-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const diskFull = (): void => symlinkSync('/dev/full', join(dir, 'auth.json.tmp'));
const refused = { code: 'unavailable', message: 'storage failure: cannot write auth.json: ENOSPC: no space left on device, write; nothing was changed' };

describe('auth store on a full disk', () => {
  it('refuses each change as a storage failure and keeps what it had, in memory and on disk', () => {
    const store = new AuthStore(dir);
    store.ensureWorkspace('default');
    store.createWorkspace('other');
    const { apiKey, info } = store.createKey({ workspace: 'default', role: 'workspace', label: 'ci' });
    const onDisk = readFileSync(join(dir, 'auth.json'), 'utf8');

    diskFull();
    expect(() => store.createWorkspace('acme')).toThrow(expect.objectContaining(refused));
    expect(store.workspace('acme')).toBeUndefined();
    diskFull();
    expect(() => store.revokeKey(info.key_id)).toThrow(expect.objectContaining(refused));
    expect(store.authenticate(apiKey)).toMatchObject({ keyId: info.key_id });
    expect(store.keys().map((k) => k.key_id)).toEqual([info.key_id]);
    diskFull();
    expect(() => store.updateWorkspace('default', { default_ttl_s: 60 })).toThrow(expect.objectContaining(refused));
    expect(store.workspace('default')?.default_ttl_s).toBeUndefined();
    diskFull();
    expect(() => store.createKey({ workspace: 'default', role: 'admin' })).toThrow(expect.objectContaining(refused));
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
    expect(() => writeFileDurably(path, 'new')).toThrow(expect.objectContaining({ code: 'ENOSPC', message: `cannot write ${path}: ENOSPC: no space left on device, write` }));
    expect(readFileSync(path, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['meta.json']);
  });
});
