/**
 * @module cluster/subjects — the names a cluster uses on NATS: each partition's stream and its
 * subject, and the subjects a node listens on (forwarded calls, pushes for its subscriptions,
 * partitions handed to it).
 */
export class ClusterSubjects {
  constructor(readonly name: string) {}

  stream(p: number): string {
    return `${this.name}_p${p}`;
  }

  log(p: number): string {
    return `${this.name}.p.${p}.log`;
  }

  node(node: string, what: 'call' | 'push' | 'take'): string {
    return `${this.name}.node.${node}.${what}`;
  }

  /** Feeds and closes relayed to the node holding subscription `id`. */
  subscription(id: number): string {
    return `${this.name}.sub.${id}`;
  }
}
