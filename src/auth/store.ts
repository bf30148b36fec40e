/**
 * @module auth/store — workspaces and API keys, kept in `auth.json` in the data directory and
 * replaced atomically on every change. The server re-reads the file when another process (the CLI)
 * changes it, so keys created offline work without a restart.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { timingSafeEqual } from 'node:crypto';
import { FlashbulbError } from '../errors/codes.ts';
import { writeFileDurably } from '../files/durable.ts';
import { generateApiKey, generateKeyId, hashKey, type Role } from './keys.ts';
import { DEFAULT_WORKSPACE, SLUG_RE, type Principal } from './principal.ts';

export interface WorkspaceInfo {
  slug: string;
  name: string;
  created_at: number;
  /** Memories written without ttl_s or expires_at_us expire this many seconds after creation (absent: never). */
  default_ttl_s?: number | null;
}

export interface KeyInfo {
  key_id: string;
  role: Role;
  workspace: string;
  label: string | null;
  created_at: number;
}

export interface StoredKey extends KeyInfo {
  sha256: string;
}

interface AuthFile {
  format: 1;
  workspaces: WorkspaceInfo[];
  keys: StoredKey[];
}

/**
 * What the server needs from a key store. Reads answer from memory (they sit on every request's
 * path); changes may go over the network (cluster mode: src/cluster/auth-sync.ts), so callers
 * await them. `ensureWorkspace` stays synchronous: with auth off every request may name a new
 * workspace, and a cluster store records it in the background.
 */
export interface AuthDirectory {
  reload(now?: number): void;
  authenticate(apiKey: string): Principal | null;
  hasKeys(): boolean;
  workspaces(): WorkspaceInfo[];
  workspace(slug: string): WorkspaceInfo | undefined;
  ensureWorkspace(slug: string, name?: string): WorkspaceInfo;
  createWorkspace(slug: string, name?: string): WorkspaceInfo | Promise<WorkspaceInfo>;
  updateWorkspace(
    slug: string,
    change: { name?: string; default_ttl_s?: number | null },
  ): WorkspaceInfo | Promise<WorkspaceInfo>;
  deleteWorkspace(slug: string): { revokedKeys: number } | Promise<{ revokedKeys: number }>;
  keys(): KeyInfo[];
  createKey(opts: {
    workspace: string;
    role: Role;
    label?: string | null;
  }): { info: KeyInfo; apiKey: string } | Promise<{ info: KeyInfo; apiKey: string }>;
  revokeKey(keyId: string): KeyInfo | Promise<KeyInfo>;
  /** Creates the first admin key when there is no key at all; null when keys exist (or, in a cluster, another node is creating it). */
  firstAdminKey(): string | null | Promise<string | null>;
  /** Calls `listener` after every change of the keys or workspaces (made here, by the CLI, or by another node). */
  onChange(listener: () => void): void;
}

/** How often the server looks for changes made by the CLI. */
const RELOAD_CHECK_MS = 250;

export class AuthStore implements AuthDirectory {
  readonly #path: string;
  #data: AuthFile;
  #byHash = new Map<string, StoredKey>();
  #mtimeMs = 0;
  #checkedAt = 0;
  readonly #listeners: Array<() => void> = [];

  constructor(dataDir: string) {
    this.#path = join(dataDir, 'auth.json');
    this.#data = { format: 1, workspaces: [], keys: [] };
    if (!existsSync(this.#path)) return;
    const mtime = statSync(this.#path).mtimeMs;
    this.#load(readAuthFile(this.#path), mtime); // unreadable: start-up stops, naming the file
  }

  /**
   * Re-reads the file if it changed on disk (checked at most every 250 ms). A file that cannot
   * be read (a hand edit gone wrong) is reported once and the keys loaded before stay in force,
   * rather than failing requests.
   */
  reload(now: number = Date.now()): void {
    if (now - this.#checkedAt < RELOAD_CHECK_MS) return;
    this.#checkedAt = now;
    if (!existsSync(this.#path)) return;
    const mtime = statSync(this.#path).mtimeMs;
    if (mtime === this.#mtimeMs) return;
    let parsed: AuthFile;
    try {
      parsed = readAuthFile(this.#path);
    } catch (err) {
      this.#mtimeMs = mtime; // said once for this version of the file
      console.error(
        `${(err as Error).message}; the workspaces and keys read before stay in force until it is fixed (the next change made through the server rewrites it)`,
      );
      return;
    }
    this.#load(parsed, mtime);
  }

  #load(data: AuthFile, mtime: number): void {
    this.#data = data;
    this.#mtimeMs = mtime;
    this.#byHash = new Map(data.keys.map((k) => [k.sha256, k]));
    for (const listener of this.#listeners) listener();
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Writes `next` and then makes it the store's data: a change the file did not take is no change at all. */
  #save(next: AuthFile): void {
    try {
      writeFileDurably(this.#path, JSON.stringify(next, null, 2), { mode: 0o600 });
    } catch (err) {
      // writeFileDurably names the full path; a client hears the file's name and the system's reason.
      const { cause } = err as Error;
      throw new FlashbulbError(
        'unavailable',
        `storage failure: cannot write auth.json: ${cause instanceof Error ? cause.message : String(err)}; nothing was changed`,
      );
    }
    this.#load(next, statSync(this.#path).mtimeMs);
  }

  authenticate(apiKey: string): Principal | null {
    const digest = hashKey(apiKey);
    const found = this.#byHash.get(digest);
    if (!found || !timingSafeEqual(Buffer.from(found.sha256, 'hex'), Buffer.from(digest, 'hex')))
      return null;
    return { keyId: found.key_id, role: found.role, workspace: found.workspace };
  }

  hasKeys(): boolean {
    return this.#data.keys.length > 0;
  }

  workspaces(): WorkspaceInfo[] {
    return [...this.#data.workspaces].sort((a, b) => a.slug.localeCompare(b.slug));
  }

  workspace(slug: string): WorkspaceInfo | undefined {
    return this.#data.workspaces.find((w) => w.slug === slug);
  }

  /** Makes sure a workspace exists (used for `default`, and for any slug when auth is off). */
  ensureWorkspace(slug: string, name = slug): WorkspaceInfo {
    return this.workspace(slug) ?? this.createWorkspace(slug, name);
  }

  createWorkspace(slug: string, name: string = slug): WorkspaceInfo {
    if (!SLUG_RE.test(slug))
      throw new FlashbulbError('invalid_input', `slug must match ${SLUG_RE.source}`);
    if (this.workspace(slug))
      throw new FlashbulbError('conflict', `workspace '${slug}' already exists`);
    const ws: WorkspaceInfo = { slug, name, created_at: Date.now() * 1000 };
    this.#save({ ...this.#data, workspaces: [...this.#data.workspaces, ws] });
    return ws;
  }

  /** Changes a workspace's name or default TTL (null removes it). */
  updateWorkspace(
    slug: string,
    change: { name?: string; default_ttl_s?: number | null },
  ): WorkspaceInfo {
    const ws = this.workspace(slug);
    if (!ws) throw new FlashbulbError('not_found', `workspace '${slug}' not found`);
    const updated: WorkspaceInfo = { ...ws };
    if (change.name !== undefined) updated.name = change.name;
    if (change.default_ttl_s !== undefined) updated.default_ttl_s = change.default_ttl_s;
    this.#save({
      ...this.#data,
      workspaces: this.#data.workspaces.map((w) => (w === ws ? updated : w)),
    });
    return updated;
  }

  /** Deletes a workspace and revokes its keys. */
  deleteWorkspace(slug: string): { revokedKeys: number } {
    if (!this.workspace(slug))
      throw new FlashbulbError('not_found', `workspace '${slug}' not found`);
    if (slug === DEFAULT_WORKSPACE)
      throw new FlashbulbError(
        'invalid_input',
        `workspace '${DEFAULT_WORKSPACE}' cannot be deleted`,
      );
    const keys = this.#data.keys.filter((k) => k.workspace !== slug);
    const revokedKeys = this.#data.keys.length - keys.length;
    this.#save({
      ...this.#data,
      workspaces: this.#data.workspaces.filter((w) => w.slug !== slug),
      keys,
    });
    return { revokedKeys };
  }

  keys(): KeyInfo[] {
    return this.#data.keys.map(({ sha256: _hash, ...info }) => info);
  }

  createKey(opts: { workspace: string; role: Role; label?: string | null }): {
    info: KeyInfo;
    apiKey: string;
  } {
    if (!this.workspace(opts.workspace))
      throw new FlashbulbError('not_found', `workspace '${opts.workspace}' not found`);
    const apiKey = generateApiKey(opts.role);
    const info: KeyInfo = {
      key_id: generateKeyId(),
      role: opts.role,
      workspace: opts.workspace,
      label: opts.label ?? null,
      created_at: Date.now() * 1000,
    };
    this.#save({ ...this.#data, keys: [...this.#data.keys, { ...info, sha256: hashKey(apiKey) }] });
    return { info, apiKey };
  }

  firstAdminKey(): string | null {
    return this.hasKeys()
      ? null
      : this.createKey({ workspace: DEFAULT_WORKSPACE, role: 'admin', label: 'first start' })
          .apiKey;
  }

  revokeKey(keyId: string): KeyInfo {
    const found = this.#data.keys.find((k) => k.key_id === keyId);
    if (!found) throw new FlashbulbError('not_found', `key '${keyId}' not found`);
    this.#save({ ...this.#data, keys: this.#data.keys.filter((k) => k.key_id !== keyId) });
    const { sha256: _hash, ...info } = found;
    return info;
  }
}

/** Reads and checks the shape of an auth file; throws naming the file and what is wrong. */
function readAuthFile(path: string): AuthFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read ${path}: ${(err as Error).message}`);
  }
  const f = parsed as Partial<AuthFile> | null;
  if (
    typeof f !== 'object' ||
    f === null ||
    f.format !== 1 ||
    !Array.isArray(f.workspaces) ||
    !Array.isArray(f.keys)
  ) {
    throw new Error(
      `cannot read ${path}: not a Flashbulb key file (expected {"format": 1, "workspaces": [...], "keys": [...]})`,
    );
  }
  return f as AuthFile;
}
