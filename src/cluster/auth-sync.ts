/**
 * @module cluster/auth-sync — the cluster's one key store: workspaces (`ws.<slug>`) and API keys
 * (`key.<key_id>`, SHA-256 only) in the KV bucket `<name>-auth`, held whole in memory on every
 * node and kept current by a KV watch, so authentication never leaves the process; creations are
 * compare-and-set, so two nodes never both create a workspace, and only one node of a new cluster
 * creates (and prints) the first admin key (`bootstrap`).
 */
import { timingSafeEqual } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { KV, KvEntry } from '@nats-io/kv';
import type { Config } from '../config/index.ts';
import { FlashbulbError } from '../errors/codes.ts';
import { hashKey, type Role } from '../auth/keys.ts';
import { DEFAULT_WORKSPACE, SLUG_RE, type Principal } from '../auth/principal.ts';
import type { AuthDirectory, KeyInfo, StoredKey, WorkspaceInfo } from '../auth/store.ts';
import {
  JETSTREAM_WAIT_MS,
  type Claim,
  connectBucket,
  newKey,
  unavailable,
  parseJson,
  toWorkspace,
  toStoredKey,
  toClaim,
} from './auth-bucket.ts';

const WS = 'ws.';
const KEY = 'key.';
const BOOTSTRAP = 'bootstrap';
/** A first-admin claim younger than this is another node at work; an older one with no key behind it was abandoned. */
const CLAIM_STALE_MS = 30_000;
const UPDATE_ATTEMPTS = 5;
/** How long start-up waits for the watch to deliver the bucket's current content. */
const LOAD_WAIT_MS = 15_000;

export interface ClusterAuthOptions {
  config: Pick<Config, 'natsUrls' | 'nodeId' | 'clusterName' | 'natsReplicas' | 'clusterLeaseMs'>;
  log: (line: string) => void;
  /** Connection name suffix (the CLI uses its own). */
  role?: string;
}

export class ClusterAuth implements AuthDirectory {
  readonly #nc: NatsConnection;
  readonly #kv: KV;
  readonly #node: string;
  readonly #log: (line: string) => void;
  /** Last revision applied per bucket key (a late watch entry never undoes a newer change). */
  readonly #revs = new Map<string, number>();
  readonly #workspaces = new Map<string, { rev: number; info: WorkspaceInfo }>();
  readonly #keys = new Map<string, { rev: number; key: StoredKey }>();
  readonly #byHash = new Map<string, StoredKey>();
  #lastRev = 0;
  #closed = false;
  readonly #listeners: Array<() => void> = [];
  #watching: Promise<void> = Promise.resolve();

  private constructor(nc: NatsConnection, kv: KV, o: ClusterAuthOptions) {
    this.#nc = nc;
    this.#kv = kv;
    this.#node = o.config.nodeId;
    this.#log = o.log;
  }

  /** Connects, opens (or makes) the bucket, loads it and starts the watch. */
  static async start(o: ClusterAuthOptions): Promise<ClusterAuth> {
    const { nc, kv } = await connectBucket(o.config, o.role ?? 'auth', o.log);
    try {
      const auth = new ClusterAuth(nc, kv, o);
      await auth.#watch();
      return auth;
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw err;
    }
  }

  /** Stops the watch and closes the connection. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#nc.drain().catch(() => undefined);
    await this.#watching.catch(() => undefined);
  }

  // ---- the in-memory view --------------------------------------------------------------------

  /** Loads every current entry, then keeps applying changes; resolves once the load is complete. */
  async #watch(): Promise<void> {
    const last = (await this.#kv.status()).streamInfo.state.last_seq;
    let loaded!: () => void;
    const ready = new Promise<void>((resolve) => (loaded = resolve));
    if (last <= this.#lastRev) loaded();
    const iter = await this.#kv.watch(
      this.#lastRev > 0 ? { resumeFromRevision: this.#lastRev + 1 } : {},
    );
    this.#watching = (async () => {
      for await (const e of iter) {
        this.#apply(e);
        if (e.revision >= last) loaded();
      }
    })()
      .catch((err: unknown) =>
        this.#log(
          `cluster auth: watch failed: ${err instanceof Error ? err.message : String(err)}`,
        ),
      )
      .finally(() => {
        loaded();
        if (this.#closed) return;
        // The watch ended without close(): start again from the last change applied.
        this.#log('cluster auth: watch ended; resuming');
        setTimeout(
          () =>
            void this.#watch().catch((err: unknown) =>
              this.#log(`cluster auth: resuming the watch failed: ${String(err)}`),
            ),
          500,
        );
      });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>(
      (resolve) => (timer = setTimeout(() => resolve(true), LOAD_WAIT_MS)),
    );
    if (await Promise.race([ready.then(() => false), late]))
      this.#log(
        `cluster auth: the key store was not loaded up to revision ${last} within ${LOAD_WAIT_MS / 1000} s; going on with what arrived`,
      );
    clearTimeout(timer);
  }

  #apply(e: Pick<KvEntry, 'key' | 'revision' | 'operation'> & { string(): string }): void {
    if (e.revision > this.#lastRev) this.#lastRev = e.revision;
    if ((this.#revs.get(e.key) ?? 0) >= e.revision) return;
    this.#revs.set(e.key, e.revision);
    const value = e.operation === 'PUT' ? parseJson(e.string()) : null;
    if (e.key.startsWith(WS)) {
      const slug = e.key.slice(WS.length);
      const info = value === null ? null : toWorkspace(value);
      if (info && info.slug === slug) this.#workspaces.set(slug, { rev: e.revision, info });
      else this.#workspaces.delete(slug);
      if (value !== null && !info)
        this.#log(`cluster auth: ignored a malformed workspace entry '${e.key}'`);
    } else if (e.key.startsWith(KEY)) {
      const id = e.key.slice(KEY.length);
      const old = this.#keys.get(id);
      if (old) this.#byHash.delete(old.key.sha256);
      const key = value === null ? null : toStoredKey(value);
      if (key && key.key_id === id) {
        this.#keys.set(id, { rev: e.revision, key });
        this.#byHash.set(key.sha256, key);
      } else this.#keys.delete(id);
      if (value !== null && !key)
        this.#log(`cluster auth: ignored a malformed key entry '${e.key}'`);
    }
    for (const listener of this.#listeners) listener();
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Applies our own committed change at once (read-your-writes on this node); the watch brings it again. */
  #applyPut(key: string, revision: number, value: unknown): void {
    this.#apply({ key, revision, operation: 'PUT', string: () => JSON.stringify(value) });
  }

  #forget(key: string): void {
    if (key.startsWith(WS)) this.#workspaces.delete(key.slice(WS.length));
    const id = key.startsWith(KEY) ? key.slice(KEY.length) : null;
    const old = id === null ? undefined : this.#keys.get(id);
    if (id !== null && old) {
      this.#keys.delete(id);
      this.#byHash.delete(old.key.sha256);
    }
    for (const listener of this.#listeners) listener();
  }

  // ---- reads (memory only) -------------------------------------------------------------------

  /** Nothing to do: the watch keeps the view current. */
  reload(): void {}

  authenticate(apiKey: string): Principal | null {
    const digest = hashKey(apiKey);
    const found = this.#byHash.get(digest);
    if (!found || !timingSafeEqual(Buffer.from(found.sha256, 'hex'), Buffer.from(digest, 'hex')))
      return null;
    return { keyId: found.key_id, role: found.role, workspace: found.workspace };
  }

  hasKeys(): boolean {
    return this.#keys.size > 0;
  }

  workspaces(): WorkspaceInfo[] {
    return [...this.#workspaces.values()]
      .map((w) => ({ ...w.info }))
      .sort((a, b) => a.slug.localeCompare(b.slug));
  }

  workspace(slug: string): WorkspaceInfo | undefined {
    const w = this.#workspaces.get(slug);
    return w ? { ...w.info } : undefined;
  }

  keys(): KeyInfo[] {
    return [...this.#keys.values()]
      .map(({ key: { sha256: _hash, ...info } }) => info)
      .sort((a, b) => a.created_at - b.created_at || a.key_id.localeCompare(b.key_id));
  }

  // ---- changes (committed to the bucket before they are answered) -----------------------------

  /**
   * With auth off any request may name a new workspace: it is known here at once and recorded in
   * the bucket in the background (if another node records it first, the watch brings theirs).
   */
  ensureWorkspace(slug: string, name: string = slug): WorkspaceInfo {
    const known = this.workspace(slug);
    if (known) return known;
    if (!SLUG_RE.test(slug))
      throw new FlashbulbError('invalid_input', `slug must match ${SLUG_RE.source}`);
    const info: WorkspaceInfo = { slug, name, created_at: Date.now() * 1000 };
    this.#workspaces.set(slug, { rev: 0, info });
    void this.#kv
      .create(WS + slug, JSON.stringify(info))
      .then((rev) => this.#applyPut(WS + slug, rev, info))
      .catch(() => undefined);
    return { ...info };
  }

  /**
   * Makes sure a workspace exists in the bucket (start-up: `default`). A bucket that is not served
   * yet (a NATS cluster still forming: nats-server 2.12 answered the first direct gets of a new
   * bucket with "no responders") is asked again until JetStream's start-up wait runs out.
   */
  async ensureWorkspaceShared(slug: string, name: string): Promise<WorkspaceInfo> {
    const deadline = Date.now() + JETSTREAM_WAIT_MS;
    for (;;) {
      try {
        return this.workspace(slug) ?? (await this.createWorkspace(slug, name));
      } catch (err) {
        const now = this.workspace(slug);
        if (err instanceof FlashbulbError && err.code === 'conflict' && now) return now;
        // Unavailable, or created by another node and not yet seen by our watch: ask again.
        if (
          !(
            err instanceof FlashbulbError &&
            (err.code === 'unavailable' || err.code === 'conflict')
          ) ||
          Date.now() > deadline
        )
          throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async createWorkspace(slug: string, name: string = slug): Promise<WorkspaceInfo> {
    if (!SLUG_RE.test(slug))
      throw new FlashbulbError('invalid_input', `slug must match ${SLUG_RE.source}`);
    if (this.workspace(slug))
      throw new FlashbulbError('conflict', `workspace '${slug}' already exists`);
    const ws: WorkspaceInfo = { slug, name, created_at: Date.now() * 1000 };
    const rev = await this.#create(
      WS + slug,
      ws,
      () => new FlashbulbError('conflict', `workspace '${slug}' already exists`),
    );
    this.#applyPut(WS + slug, rev, ws);
    return { ...ws };
  }

  /** Changes a workspace's name or default TTL (null removes it); compare-and-set, retried on a concurrent change. */
  async updateWorkspace(
    slug: string,
    change: { name?: string; default_ttl_s?: number | null },
  ): Promise<WorkspaceInfo> {
    for (let attempt = 1; ; attempt++) {
      const entry = await this.#op(() => this.#kv.get(WS + slug));
      const current = entry?.operation === 'PUT' ? toWorkspace(parseJson(entry.string())) : null;
      if (!entry || !current)
        throw new FlashbulbError('not_found', `workspace '${slug}' not found`);
      const next: WorkspaceInfo = { ...current };
      if (change.name !== undefined) next.name = change.name;
      if (change.default_ttl_s !== undefined) next.default_ttl_s = change.default_ttl_s;
      try {
        const rev = await this.#kv.update(WS + slug, JSON.stringify(next), entry.revision);
        this.#applyPut(WS + slug, rev, next);
        return next;
      } catch (err) {
        if (attempt >= UPDATE_ATTEMPTS) throw unavailable(`updating workspace '${slug}'`, err);
      }
    }
  }

  /** Deletes a workspace and revokes its keys (keys first: they stop working before the workspace goes). */
  async deleteWorkspace(slug: string): Promise<{ revokedKeys: number }> {
    if (!this.workspace(slug))
      throw new FlashbulbError('not_found', `workspace '${slug}' not found`);
    if (slug === DEFAULT_WORKSPACE)
      throw new FlashbulbError(
        'invalid_input',
        `workspace '${DEFAULT_WORKSPACE}' cannot be deleted`,
      );
    const doomed = [...this.#keys.values()]
      .filter((k) => k.key.workspace === slug)
      .map((k) => k.key.key_id);
    for (const id of doomed) await this.#delete(KEY + id);
    await this.#delete(WS + slug);
    return { revokedKeys: doomed.length };
  }

  async createKey(opts: {
    workspace: string;
    role: Role;
    label?: string | null;
  }): Promise<{ info: KeyInfo; apiKey: string }> {
    if (!this.workspace(opts.workspace))
      throw new FlashbulbError('not_found', `workspace '${opts.workspace}' not found`);
    const { info, apiKey, stored } = newKey(opts.role, opts.workspace, opts.label ?? null);
    const rev = await this.#create(
      KEY + info.key_id,
      stored,
      () => new FlashbulbError('conflict', `key id '${info.key_id}' already exists; retry`),
    );
    this.#applyPut(KEY + info.key_id, rev, stored);
    return { info, apiKey };
  }

  async revokeKey(keyId: string): Promise<KeyInfo> {
    const found = this.#keys.get(keyId);
    if (!found) throw new FlashbulbError('not_found', `key '${keyId}' not found`);
    await this.#delete(KEY + keyId);
    const { sha256: _hash, ...info } = found.key;
    return info;
  }

  /**
   * The first admin key of the cluster, made by exactly one node: the one whose compare-and-set
   * on `bootstrap` succeeds. Others return null (the winner prints the key). A claim with no key
   * behind it after CLAIM_STALE_MS (its node died, or every key was revoked since) may be taken
   * over, as a single process makes a new admin key when it starts with none.
   */
  async firstAdminKey(): Promise<string | null> {
    if (this.hasKeys()) return null;
    const current = await this.#op(() => this.#kv.get(BOOTSTRAP));
    if (current?.operation === 'PUT') {
      const claim = toClaim(parseJson(current.string()));
      if (claim && Date.now() - claim.at < CLAIM_STALE_MS) return null;
    }
    const { info, apiKey, stored } = newKey('admin', DEFAULT_WORKSPACE, 'first start');
    const claim: Claim = { node: this.#node, key_id: info.key_id, at: Date.now() };
    try {
      if (current?.operation === 'PUT')
        await this.#kv.update(BOOTSTRAP, JSON.stringify(claim), current.revision);
      else await this.#kv.create(BOOTSTRAP, JSON.stringify(claim));
    } catch {
      return null; // another node claimed it first
    }
    // Keys may have appeared between our look and our claim (another node's claim just before ours went stale).
    if (this.hasKeys()) return null;
    const rev = await this.#create(
      KEY + info.key_id,
      stored,
      () => new FlashbulbError('conflict', 'key id collision'),
    );
    this.#applyPut(KEY + info.key_id, rev, stored);
    return apiKey;
  }

  // ---- bucket operations -----------------------------------------------------------------------

  /** `create` (fails when the key holds a value): `exists` makes the error for that case. */
  async #create(key: string, value: unknown, exists: () => FlashbulbError): Promise<number> {
    try {
      return await this.#kv.create(key, JSON.stringify(value));
    } catch (err) {
      const now = await this.#op(() => this.#kv.get(key));
      if (now?.operation === 'PUT') throw exists();
      throw unavailable(`writing '${key}'`, err);
    }
  }

  async #delete(key: string): Promise<void> {
    await this.#op(() => this.#kv.delete(key));
    this.#forget(key);
  }

  async #op<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw unavailable('the cluster key store', err);
    }
  }
}
