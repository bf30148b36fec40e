/** @module auth/principal — who is calling and which workspace a request may act on. */
import { FlashbulbError } from '../errors/codes.ts';
import { SLUG_RE } from '../model/limits.ts';
import type { Role } from './keys.ts';

export interface Principal {
  keyId: string | null;
  role: Role;
  /** The key's own workspace (admin keys: `default`). */
  workspace: string;
}

export const DEFAULT_WORKSPACE = 'default';
export { SLUG_RE };

/** The principal used for every request when authentication is off. */
export const ANONYMOUS_ADMIN: Principal = Object.freeze({
  keyId: null,
  role: 'admin',
  workspace: DEFAULT_WORKSPACE,
});

/**
 * The workspace a request acts on. Workspace keys may act only on their own workspace, whatever
 * is requested (REST prefixes naming another one are refused; see `strict`); admin keys on any.
 */
export function targetWorkspace(
  p: Principal,
  requested: string | undefined,
  opts: { strict: boolean },
): string {
  if (requested === undefined || requested === '') return p.workspace;
  // A workspace key acts on its own workspace whatever a lenient transport (gRPC tenant_id) names,
  // so what it names need not even be a valid slug.
  if (p.role !== 'admin' && !opts.strict) return p.workspace;
  if (!SLUG_RE.test(requested))
    throw new FlashbulbError('invalid_input', `workspace '${requested}' is not a valid slug`);
  if (p.role === 'admin' || requested === p.workspace) return requested;
  if (!opts.strict) return p.workspace;
  throw new FlashbulbError('forbidden', `this key may only access workspace '${p.workspace}'`);
}
