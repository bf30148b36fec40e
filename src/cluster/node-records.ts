/**
 * @module cluster/node-records — the live nodes: each writes its record (`n.<id>`: start time,
 * partitions held and their applied sequence) to the `<name>-nodes` bucket on every heartbeat;
 * the bucket's max age removes the record of a node that stopped. Records are listed from the
 * bucket stream's leader (`STREAM.INFO` with a subject filter) rather than with `KV.keys()`, whose
 * consumer JetStream's meta leader must create (after the meta leader is lost, heartbeats failed
 * until a new one was elected).
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NodeRecord } from './status-view.ts';

export class NodeRecords {
  readonly #kv: KV;
  readonly #jsm: JetStreamManager;
  readonly #bucket: string;
  readonly #self: string;
  /** When each node's record was last written (server time, ms). */
  readonly #heardAt = new Map<string, number>();
  live = new Map<string, NodeRecord>();

  constructor(kv: KV, jsm: JetStreamManager, bucket: string, self: string) {
    this.#kv = kv;
    this.#jsm = jsm;
    this.#bucket = bucket;
    this.#self = self;
  }

  async write(record: NodeRecord): Promise<void> {
    await this.#kv.put(`n.${this.#self}`, JSON.stringify(record));
  }

  async remove(): Promise<void> {
    await this.#kv.delete(`n.${this.#self}`);
  }

  /** Reads every record; `self` stands in for this node's own. */
  async read(self: NodeRecord): Promise<void> {
    const live = new Map<string, NodeRecord>();
    const prefix = `$KV.${this.#bucket}.`;
    const info = await this.#jsm.streams.info(`KV_${this.#bucket}`, {
      subjects_filter: `${prefix}>`,
    });
    const keys = Object.keys(info.state.subjects ?? {}).map((subject) =>
      subject.slice(prefix.length),
    );
    await Promise.all(
      keys.map(async (k) => {
        const e = await this.#kv.get(k);
        if (e && e.operation === 'PUT') {
          const rec = JSON.parse(e.string()) as NodeRecord;
          live.set(rec.id, rec);
          this.#heardAt.set(rec.id, e.created.getTime());
        }
      }),
    );
    live.set(this.#self, self);
    this.live = live;
  }

  /**
   * The live nodes to share partitions with: this one, and those whose record was written less
   * than `withinMs` ago. A node silent for longer is most likely gone (its leases lapsing), so
   * its partitions fit under the others' fair share at once.
   */
  recent(withinMs: number, now = Date.now()): string[] {
    return [...this.live.keys()].filter(
      (id) => id === this.#self || now - (this.#heardAt.get(id) ?? now) < withinMs,
    );
  }
}
