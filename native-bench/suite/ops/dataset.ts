/**
 * @module native-bench/suite/ops/dataset — the seeded synthetic corpus and what the suite remembers
 * about it: every stored id, the ids that have edges (seeds for causal recall), and a bounded
 * sample of single-sentence memories with their text (targets for subscribe_push), which revise
 * and forget leave alone so their text stays what was stored.
 *
 * Memories: 1–4 sentences of 40–300 characters each (85% one sentence), 90% about one of 50
 * entities, a small context object, and edges to recent memories: 35% of memories get one,
 * 10% a second (caused_by, followed_by or related_to).
 */
import { ENTITIES, rememberBody, sentence } from '../../lib/corpus.ts';
import type { Rng } from '../../lib/prng.ts';
import type { EdgeKind, MemoryInput } from './driver.ts';

const EDGE_KINDS: readonly EdgeKind[] = ['caused_by', 'followed_by', 'related_to'];
/** Edges point at one of this many most recently stored memories. */
const RECENT_WINDOW = 1000;
/** Every SAMPLE_EVERY-th single-sentence memory is a sample, up to SAMPLE_MAX. */
const SAMPLE_EVERY = 2;
const SAMPLE_MAX = 20_000;

export interface Sample {
  id: string;
  content: string;
}

export class Dataset {
  /** Every stored id that has not been forgotten, in store order (roughly). */
  readonly ids: string[] = [];
  /** Ids of memories that have at least one edge. */
  readonly linked: string[] = [];
  /** Single-sentence memories and their text. */
  readonly samples: Sample[] = [];
  readonly rng: Rng;
  readonly #sampleIds = new Set<string>();
  #singles = 0;
  #sampleCursor = 0;

  constructor(rng: Rng) {
    this.rng = rng;
  }

  /** A new memory to store; edges point at memories already stored. */
  nextMemory(): MemoryInput {
    const body = rememberBody(this.rng);
    const sentences = this.rng.next() < 0.85 ? 1 : 2 + this.rng.int(3);
    let content = body.content;
    for (let i = 1; i < sentences; i++) content += ` ${sentence(this.rng)}`;
    return {
      content,
      importance: body.importance,
      context: body.context,
      entityId: body.entity_id ?? null,
      edges: this.#edges(),
    };
  }

  #edges(): MemoryInput['edges'] {
    if (this.ids.length === 0) return [];
    const n = this.rng.next() < 0.35 ? (this.rng.next() < 0.29 ? 2 : 1) : 0;
    const edges: MemoryInput['edges'] = [];
    for (let i = 0; i < n; i++) {
      const back = 1 + this.rng.int(Math.min(RECENT_WINDOW, this.ids.length));
      edges.push({
        targetId: this.ids[this.ids.length - back] ?? this.pickId(),
        type: this.rng.pick(EDGE_KINDS),
      });
    }
    return edges;
  }

  /** Records a stored memory. */
  stored(id: string, m: MemoryInput): void {
    this.ids.push(id);
    if (m.edges.length > 0) {
      this.linked.push(id);
      for (const e of m.edges) this.linked.push(e.targetId);
    }
    if (
      /[.!?]\s/.test(m.content) ||
      this.samples.length >= SAMPLE_MAX ||
      this.#singles++ % SAMPLE_EVERY !== 0
    )
      return;
    this.samples.push({ id, content: m.content });
    this.#sampleIds.add(id);
  }

  pickId(): string {
    return this.rng.pick(this.ids);
  }

  /** A random stored id that is not a sample (for revise). */
  pickMutable(): string {
    for (let tries = 0; tries < 100; tries++) {
      const id = this.pickId();
      if (!this.#sampleIds.has(id)) return id;
    }
    throw new Error('no stored id outside the samples');
  }

  /** The next sample, round robin across phases (so a text is fed again only after a full round). */
  nextSample(): Sample {
    const s = this.samples[this.#sampleCursor++ % Math.max(1, this.samples.length)];
    if (!s) throw new Error('no single-sentence memories stored');
    return s;
  }

  pickLinked(): string {
    return this.linked.length > 0 ? this.rng.pick(this.linked) : this.pickId();
  }

  pickEntity(): string {
    return this.rng.pick(ENTITIES);
  }

  /** A fresh cue: a new sentence from the same generator (not stored, so not cached). */
  cue(): string {
    return sentence(this.rng);
  }

  /** Removes and returns the most recently stored id that is not a sample (for forget). */
  takeId(): string {
    for (let i = this.ids.length - 1; i >= 0; i--) {
      const id = this.ids[i];
      if (id !== undefined && !this.#sampleIds.has(id)) return this.ids.splice(i, 1)[0] ?? id;
    }
    throw new Error('no stored ids left to forget');
  }
}
