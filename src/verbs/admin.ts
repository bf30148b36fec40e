/** @module verbs/admin — whoami, workspaces and keys (admin keys only, except whoami). */
import type { Principal } from '../auth/principal.ts';
import { DEFAULT_WORKSPACE } from '../auth/principal.ts';
import type { KeyInfo, WorkspaceInfo } from '../auth/store.ts';
import type { Role } from '../auth/keys.ts';
import { FlashbulbError } from '../errors/codes.ts';
import type { ClusterStatus } from '../cluster/status.ts';
import { noteAdminActivity } from './activity.ts';
import { requireAdmin, type Services } from './context.ts';
import { checkTtl } from './validate.ts';
import { memorySpan } from './memory-span.ts';

export interface Whoami {
  key_id: string | null;
  role: Role;
  workspace: { slug: string; name: string };
  can_access: 'all' | string[];
  auth_enabled: boolean;
}

export function whoami(svc: Services, principal: Principal): Whoami {
  const ws = svc.auth.workspace(principal.workspace);
  return {
    key_id: principal.keyId,
    role: principal.role,
    workspace: { slug: principal.workspace, name: ws?.name ?? principal.workspace },
    can_access: principal.role === 'admin' ? 'all' : [principal.workspace],
    auth_enabled: svc.config.authEnabled,
  };
}

/** Cluster mode only: who owns which partition, and how far each owner is behind its stream. */
export async function clusterStatus(svc: Services, principal: Principal): Promise<ClusterStatus> {
  requireAdmin({ principal });
  if (!svc.cluster)
    throw new FlashbulbError(
      'not_found',
      'cluster mode is off (it needs FLASHBULB_NATS_URL and FLASHBULB_NODE_ID)',
    );
  return svc.cluster.status();
}

export type WorkspaceView = WorkspaceInfo & { memory_count: number };

export async function listWorkspaces(
  svc: Services,
  principal: Principal,
): Promise<WorkspaceView[]> {
  requireAdmin({ principal });
  return Promise.all(svc.auth.workspaces().map((w) => withCount(svc, w)));
}

export async function getWorkspace(
  svc: Services,
  principal: Principal,
  slug: string,
): Promise<WorkspaceView> {
  requireAdmin({ principal });
  const ws = svc.auth.workspace(slug);
  if (!ws) throw new FlashbulbError('not_found', `workspace '${slug}' not found`);
  return withCount(svc, ws);
}

async function withCount(svc: Services, w: WorkspaceInfo): Promise<WorkspaceView> {
  return { ...w, memory_count: await svc.shards.call(w.slug, 'count', {}) };
}

export async function createWorkspace(
  svc: Services,
  principal: Principal,
  input: { slug: string; name?: string | undefined; default_ttl_s?: number | null | undefined },
): Promise<{ workspace: WorkspaceInfo; api_key: string; key_id: string }> {
  requireAdmin({ principal });
  const ttl =
    input.default_ttl_s == null ? undefined : checkTtl('default_ttl_s', input.default_ttl_s);
  let workspace = await svc.auth.createWorkspace(input.slug, input.name ?? input.slug);
  if (ttl !== undefined)
    workspace = await svc.auth.updateWorkspace(workspace.slug, { default_ttl_s: ttl });
  const { info, apiKey } = await svc.auth.createKey({
    workspace: workspace.slug,
    role: 'workspace',
    label: 'created with the workspace',
  });
  noteAdminActivity(svc, principal, workspace.slug, 'workspace_create', {
    count: 1,
    detail: `workspace ${workspace.slug} and key ${info.key_id}`,
  });
  memorySpan(workspace.slug, 'create_memory_store');
  return { workspace, api_key: apiKey, key_id: info.key_id };
}

/** Renames a workspace or sets its default TTL (`default_ttl_s: null` removes it). */
export async function updateWorkspace(
  svc: Services,
  principal: Principal,
  slug: string,
  input: { name?: string | undefined; default_ttl_s?: number | null | undefined },
): Promise<WorkspaceInfo> {
  requireAdmin({ principal });
  const change: { name?: string; default_ttl_s?: number | null } = {};
  if (input.name !== undefined) change.name = input.name;
  if (input.default_ttl_s !== undefined)
    change.default_ttl_s =
      input.default_ttl_s === null ? null : checkTtl('default_ttl_s', input.default_ttl_s);
  if (Object.keys(change).length === 0)
    throw new FlashbulbError('invalid_input', 'nothing to change: give name or default_ttl_s');
  const updated = await svc.auth.updateWorkspace(slug, change);
  noteAdminActivity(svc, principal, slug, 'workspace_update', {
    count: 1,
    detail: Object.entries(change)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(', '),
  });
  return updated;
}

export async function deleteWorkspace(
  svc: Services,
  principal: Principal,
  slug: string,
): Promise<{ deleted: string; memories_deleted: number; keys_revoked: number }> {
  requireAdmin({ principal });
  if (slug === DEFAULT_WORKSPACE)
    throw new FlashbulbError('invalid_input', `workspace '${DEFAULT_WORKSPACE}' cannot be deleted`);
  if (!svc.auth.workspace(slug))
    throw new FlashbulbError('not_found', `workspace '${slug}' not found`);
  await svc.subscriptions.closeAll(slug);
  const { memories } = await svc.shards.call(slug, 'dropWorkspace', {});
  const { revokedKeys } = await svc.auth.deleteWorkspace(slug);
  noteAdminActivity(svc, principal, slug, 'workspace_delete', {
    count: memories,
    detail: `${memories} ${memories === 1 ? 'memory' : 'memories'} deleted, ${revokedKeys} ${revokedKeys === 1 ? 'key' : 'keys'} revoked`,
  });
  memorySpan(slug, 'delete_memory_store', { count: memories });
  return { deleted: slug, memories_deleted: memories, keys_revoked: revokedKeys };
}

export function listKeys(svc: Services, principal: Principal): KeyInfo[] {
  requireAdmin({ principal });
  return svc.auth.keys();
}

export async function createKey(
  svc: Services,
  principal: Principal,
  input: { workspace: string; role: Role; label?: string | undefined },
): Promise<KeyInfo & { api_key: string }> {
  requireAdmin({ principal });
  const { info, apiKey } = await svc.auth.createKey({
    workspace: input.workspace,
    role: input.role,
    label: input.label ?? null,
  });
  noteAdminActivity(svc, principal, info.workspace, 'key_create', {
    count: 1,
    detail: `${info.role} key ${info.key_id}${info.label === null ? '' : ` (${info.label})`}`,
  });
  return { ...info, api_key: apiKey };
}

export async function revokeKey(
  svc: Services,
  principal: Principal,
  keyId: string,
): Promise<{ revoked: KeyInfo }> {
  requireAdmin({ principal });
  if (principal.keyId === keyId)
    throw new FlashbulbError('invalid_input', 'a key cannot revoke itself');
  const revoked = await svc.auth.revokeKey(keyId);
  noteAdminActivity(svc, principal, revoked.workspace, 'key_revoke', {
    count: 1,
    detail: `${revoked.role} key ${revoked.key_id}${revoked.label === null ? '' : ` (${revoked.label})`}`,
  });
  return { revoked };
}
