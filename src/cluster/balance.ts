/**
 * @module cluster/balance — how many partitions a node should hold: free partitions are taken up
 * to a fair share (starting at an offset of its own, so nodes starting together rarely race for
 * the same ones); above the share, one partition per heartbeat goes to the node furthest below
 * it. Pure: the node applies the plan.
 */

export interface BalanceView {
  self: string;
  /** Every live node, this one included. */
  nodes: readonly string[];
  partitions: number;
  /** The holder of every held partition, as last read. */
  owners: ReadonlyMap<number, { node: string }>;
  /** Partitions this node holds (in any state). */
  owned: ReadonlySet<number>;
  /** Partitions this node gave away recently and should not take back yet. */
  coolingDown: (p: number) => boolean;
}

export interface BalancePlan {
  /** Free partitions to take now. */
  take: number[];
  /** A node below its share to hand one partition to, if this node is above its share. */
  giveTo: string | null;
}

export function balancePlan(v: BalanceView): BalancePlan {
  const nodes = [...v.nodes].sort();
  const target = Math.ceil(v.partitions / Math.max(1, nodes.length));
  const take: number[] = [];
  let mine = v.owned.size;
  const offset = nodes.indexOf(v.self) * Math.ceil(v.partitions / Math.max(1, nodes.length));
  for (let k = 0; k < v.partitions && mine < target; k++) {
    const p = (offset + k) % v.partitions;
    if (v.owners.has(p) || v.owned.has(p) || v.coolingDown(p)) continue;
    mine += 1;
    take.push(p);
  }
  if (mine <= target) return { take, giveTo: null };
  const counts = new Map<string, number>(nodes.map((n) => [n, 0]));
  for (const l of v.owners.values()) counts.set(l.node, (counts.get(l.node) ?? 0) + 1);
  const floor = Math.floor(v.partitions / nodes.length);
  const starving = nodes
    .filter((n) => n !== v.self && (counts.get(n) ?? 0) < floor)
    .sort((x, y) => (counts.get(x) ?? 0) - (counts.get(y) ?? 0));
  return { take, giveTo: starving[0] ?? null };
}
