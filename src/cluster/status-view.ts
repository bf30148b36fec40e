/**
 * @module cluster/status-view — `GET /v1/cluster` as one node sees it: the live nodes (their
 * records in the node bucket), the holder of every partition, each stream's last sequence and the
 * owner's applied sequence (lag).
 */
import type { Config } from '../config/index.ts';
import type { ClusterStatus, PartitionStatus } from './status.ts';

/** What each node writes to the node bucket on every heartbeat. */
export interface NodeRecord {
  id: string;
  started_at: number;
  /** Partition → the last stream sequence this node appended or replayed. */
  owned: Record<string, { status: PartitionStatus; applied_seq: number }>;
}

export interface StatusInput {
  self: string;
  config: Config;
  partitions: number;
  owners: ReadonlyMap<number, { node: string }>;
  live: ReadonlyMap<string, NodeRecord>;
  /** A partition stream's last sequence (0 when it cannot be read); asked for every partition at once. */
  lastSeq: (p: number) => Promise<number>;
}

export async function clusterStatus(v: StatusInput): Promise<ClusterStatus> {
  const byNode = new Map<string, number[]>();
  for (const [p, l] of v.owners) byNode.set(l.node, [...(byNode.get(l.node) ?? []), p]);
  const rows: ClusterStatus['partition_owners'] = [];
  // All at once: while NATS elects stream leaders each read may wait out its timeout, and one
  // after another they held the status for partitions × timeout (35 s in the partition bench).
  const lastSeqs = await Promise.all(Array.from({ length: v.partitions }, (_, p) => v.lastSeq(p)));
  for (let p = 0; p < v.partitions; p++) {
    const owner = v.owners.get(p)?.node ?? null;
    const lastSeq = lastSeqs[p] ?? 0;
    const reported = owner ? v.live.get(owner)?.owned[String(p)] : undefined;
    const applied = reported?.applied_seq ?? null;
    rows.push({
      partition: p,
      owner,
      status: owner === null ? 'unowned' : (reported?.status ?? 'unknown'),
      stream_last_seq: lastSeq,
      applied_seq: applied,
      lag: applied === null ? null : Math.max(0, lastSeq - applied),
    });
  }
  return {
    node: v.self,
    cluster: v.config.clusterName,
    partitions: v.partitions,
    replicas: v.config.natsReplicas,
    lease_ms: v.config.clusterLeaseMs,
    nodes: [...v.live.values()]
      .sort((a, b) => a.id.localeCompare(b.id))
      .map((n) => ({
        id: n.id,
        started_at: new Date(n.started_at).toISOString(),
        partitions: (byNode.get(n.id) ?? []).sort((a, b) => a - b),
        self: n.id === v.self,
      })),
    partition_owners: rows,
  };
}
