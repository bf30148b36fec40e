/**
 * @module api/admin-replies — what the routes that run the service answer (http/routes-admin), as
 * TypeBox schemas: workspaces, API keys (never their secrets, but once), the calling key, the
 * cluster's status, a backup's summary and health. Open objects, as in api/replies.
 */
import { Type as T } from '@sinclair/typebox';
import { IsoTime } from './time.ts';
import { literals, Nullable, Us, ref } from './schema-kit.ts';

const Role = literals(['admin', 'workspace']);

export const Workspace = T.Object(
  {
    slug: T.String(),
    name: T.String(),
    created_at: Us('Creation time'),
    created_at_iso: IsoTime('created_at'),
    default_ttl_s: T.Optional(
      Nullable(T.Number({ description: 'Default time to live of new memories, in seconds' })),
    ),
  },
  { $id: 'Workspace' },
);

export const BackupSummary = T.Object({
  to: T.String(),
  started_at: T.Integer(),
  started_at_iso: IsoTime('started_at'),
  finished_at: T.Integer(),
  finished_at_iso: IsoTime('finished_at'),
  shards: T.Array(T.Object({ shard: T.Integer(), memories: T.Integer(), bytes: T.Integer() })),
});

export const WorkspaceWithCount = T.Object({
  slug: T.String(),
  name: T.String(),
  created_at: Us('Creation time'),
  created_at_iso: IsoTime('created_at'),
  default_ttl_s: T.Optional(Nullable(T.Number())),
  memory_count: T.Integer(),
});

export const WorkspaceList = T.Object({ workspaces: T.Array(WorkspaceWithCount) });

export const WorkspaceCreated = T.Object({
  workspace: ref(Workspace),
  api_key: T.String({ description: 'Shown only in this answer' }),
  key_id: T.String(),
});

export const WorkspaceDeleted = T.Object({
  deleted: T.String(),
  memories_deleted: T.Integer(),
  keys_revoked: T.Integer(),
});

export const KeyInfo = T.Object(
  {
    key_id: T.String(),
    role: Role,
    workspace: T.String(),
    label: Nullable(T.String()),
    created_at: Us('Creation time'),
    created_at_iso: IsoTime('created_at'),
  },
  { $id: 'KeyInfo' },
);

export const KeyList = T.Object({ keys: T.Array(ref(KeyInfo)) });

export const KeyCreated = T.Intersect([
  ref(KeyInfo),
  T.Object({ api_key: T.String({ description: 'Shown only in this answer' }) }),
]);

export const KeyRevoked = T.Object({ revoked: ref(KeyInfo) });

export const Whoami = T.Object({
  key_id: Nullable(T.String()),
  role: Role,
  workspace: T.Object({ slug: T.String(), name: T.String() }),
  can_access: T.Union([T.Literal('all'), T.Array(T.String())]),
  auth_enabled: T.Boolean(),
});

const PartitionStatus = literals(['recovering', 'ready', 'releasing', 'unowned', 'unknown']);

export const ClusterStatus = T.Object({
  node: T.String({ description: 'The node that answered' }),
  cluster: T.String(),
  partitions: T.Integer(),
  replicas: T.Integer(),
  lease_ms: T.Integer(),
  nodes: T.Array(
    T.Object({
      id: T.String(),
      started_at: T.String(),
      partitions: T.Array(T.Integer()),
      self: T.Boolean(),
    }),
  ),
  partition_owners: T.Array(
    T.Object({
      partition: T.Integer(),
      owner: Nullable(T.String()),
      status: PartitionStatus,
      stream_last_seq: T.Integer({
        description: 'Last sequence of the partition stream (its write-ahead log)',
      }),
      applied_seq: Nullable(
        T.Integer({ description: 'Last sequence the owner has applied, as of its last heartbeat' }),
      ),
      lag: Nullable(T.Integer()),
    }),
  ),
});

export const Health = T.Object({
  status: literals(['alive', 'ready', 'not_ready']),
  reason: T.Optional(T.String()),
});
