/**
 * @module cluster/status — what a cluster node reports about itself and its partitions
 * (`GET /v1/cluster` and readiness): the types alone, so that verbs/ reads them without importing
 * the node.
 */

/** A partition this node holds: replaying its stream, serving, or handing it over. */
export type PartitionStatus = 'recovering' | 'ready' | 'releasing';

export interface ClusterStatus {
  node: string;
  cluster: string;
  partitions: number;
  replicas: number;
  lease_ms: number;
  nodes: Array<{ id: string; started_at: string; partitions: number[]; self: boolean }>;
  partition_owners: Array<{
    partition: number;
    owner: string | null;
    status: PartitionStatus | 'unowned' | 'unknown';
    stream_last_seq: number;
    applied_seq: number | null;
    lag: number | null;
  }>;
}
