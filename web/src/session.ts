/**
 * @module session — the signed-in key (sessionStorage only: it ends with the tab and never goes
 * in a URL), the workspace being looked at, and the typed client bound to both.
 */
import {
  FlashbulbClient,
  FlashbulbError,
  type WhoamiResponse,
} from '../../clients/typescript/src/index.ts';

const KEY_ITEM = 'flashbulb.apiKey';
const WORKSPACE_ITEM = 'flashbulb.workspace';

export interface Session {
  readonly key: string;
  readonly whoami: WhoamiResponse;
  /** The workspace the pages act in; admins may switch. */
  readonly workspace: string;
  /** Client acting in `workspace` (through the /v1/workspaces/<slug>/ prefix when it is not the key's own). */
  readonly client: FlashbulbClient;
  /** Client without a workspace prefix (admin routes: workspaces, keys, metrics). */
  readonly root: FlashbulbClient;
}

function makeClient(key: string, workspace?: string): FlashbulbClient {
  return new FlashbulbClient({
    baseUrl: window.location.origin,
    retry: { retries: 1 },
    ...(key === '' ? {} : { apiKey: key }),
    ...(workspace === undefined ? {} : { workspace }),
  });
}

/** Checks the key with whoami; throws a message fit to show when it is not accepted. */
export async function signIn(key: string, workspace?: string): Promise<Session> {
  const trimmed = key.trim();
  if (trimmed === '') throw new Error('Enter an API key (fb_admin_… or fb_live_…).');
  const root = makeClient(trimmed);
  let whoami: WhoamiResponse;
  try {
    whoami = await root.whoami();
  } catch (err) {
    throw new Error(signInMessage(err));
  }
  sessionStorage.setItem(KEY_ITEM, trimmed);
  return withWorkspace(
    { key: trimmed, whoami, root },
    workspace ?? sessionStorage.getItem(WORKSPACE_ITEM) ?? whoami.workspace.slug,
  );
}

/** A session without a key, when the server runs with authentication off; null when it wants one. */
export async function openWithoutKey(): Promise<Session | null> {
  const root = makeClient('');
  try {
    const whoami = await root.whoami();
    return whoami.auth_enabled
      ? null
      : withWorkspace(
          { key: '', whoami, root },
          sessionStorage.getItem(WORKSPACE_ITEM) ?? whoami.workspace.slug,
        );
  } catch {
    return null;
  }
}

/** The same session acting in another workspace (admins). */
export function withWorkspace(
  s: Pick<Session, 'key' | 'whoami' | 'root'>,
  workspace: string,
): Session {
  const own = workspace === s.whoami.workspace.slug;
  const allowed = own || s.whoami.can_access === 'all' || s.whoami.can_access.includes(workspace);
  const slug = allowed ? workspace : s.whoami.workspace.slug;
  sessionStorage.setItem(WORKSPACE_ITEM, slug);
  return {
    ...s,
    workspace: slug,
    client: slug === s.whoami.workspace.slug ? s.root : makeClient(s.key, slug),
  };
}

/** The key kept from earlier in this tab, if any. */
export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

export function signOut(): void {
  sessionStorage.removeItem(KEY_ITEM);
  sessionStorage.removeItem(WORKSPACE_ITEM);
}

function signInMessage(err: unknown): string {
  if (err instanceof FlashbulbError) {
    if (err.code === 'unauthenticated')
      return 'That API key was not accepted: it is unknown or has been revoked. Check the key and try again.';
    if (err.code === 'rate_limited') return 'Too many attempts; wait a moment and try again.';
    return `The server refused the sign-in: ${err.message}`;
  }
  return `Cannot reach the Flashbulb server at ${window.location.origin}: ${(err as Error).message}`;
}

/** One line for an error from any call, for the pages' error banners. */
export function describeError(err: unknown): string {
  if (err instanceof FlashbulbError && err.code === 'unauthenticated')
    return `Your API key is no longer accepted (revoked?): sign out and sign in with a valid key. (${err.message})`;
  if (err instanceof FlashbulbError) return `${err.message} (${err.code}, HTTP ${err.status})`;
  return err instanceof Error ? err.message : String(err);
}

const WORKSPACES_CHANGED = 'flashbulb:workspaces-changed';

/** Tells the workspace picker that workspaces were created or deleted. */
export function notifyWorkspacesChanged(): void {
  window.dispatchEvent(new Event(WORKSPACES_CHANGED));
}

/** Calls `cb` whenever workspaces change; returns the unsubscribe function. */
export function onWorkspacesChanged(cb: () => void): () => void {
  window.addEventListener(WORKSPACES_CHANGED, cb);
  return () => window.removeEventListener(WORKSPACES_CHANGED, cb);
}
