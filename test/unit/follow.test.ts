/**
 * cluster/follow (the subscribing node's record of its subscriptions) and the owner's side of a
 * resumed subscription (shard/subscriptions.ts): re-registration per ownership term, the state a
 * new owner gets, and what it does with it.
 */
import { describe, expect, it } from 'vitest';
import { nextTurn } from '../helpers/wait.ts';
import { FollowedSubscriptions, RESUME_RECENT } from '../../src/cluster/follow.ts';
import type { Push, SubscriptionSpec } from '../../src/protocol/shard.ts';
import { Subscriptions } from '../../src/shard/subscriptions.ts';
import { Workspace } from '../../src/shard/store/workspace.ts';
import type { MemoryRecord } from '../../src/model/memory.ts';

function unit(...xs: number[]): Float32Array {
  const v = Float32Array.from(xs);
  const n = Math.hypot(...xs);
  return v.map((x) => x / n);
}

function spec(id: number): SubscriptionSpec {
  return {
    id,
    entityId: null,
    kinds: ['episode'],
    threshold: 0.9,
    timeScopeUs: null,
    filter: null,
    maxPushes: 5,
  };
}

function memory(id: string, embedding: Float32Array, createdAt: number): MemoryRecord {
  return {
    id,
    content: id,
    importance: 0.5,
    context: {},
    entityId: null,
    embedding,
    createdAt,
    updatedAt: createdAt,
    lastAccessedAt: createdAt,
    accessCount: 0,
    kind: 'episode',
    supersededBy: null,
    expiresAt: null,
  } as unknown as MemoryRecord;
}

function push(subscription: number, id: string): Push {
  return {
    subscription,
    memory: { id } as Push['memory'],
    confidence: 1,
    score: 1,
    chunkOffset: 0,
  };
}

describe('FollowedSubscriptions', () => {
  it('registers a subscription again only when its partition has a new term, with its chunks and pushes', async () => {
    const f = new FollowedSubscriptions(2000);
    f.opened('w', spec(7), 't1');
    for (let i = 0; i < RESUME_RECENT + 3; i++)
      f.matched(7, unit(1, i, 0, 0), i * 10, i === 0 ? [push(7, 'm0')] : []);
    f.pushed([push(7, 'm1'), push(99, 'other')]);

    const sent: SubscriptionSpec[] = [];
    const register = async (_ws: string, s: SubscriptionSpec): Promise<void> => {
      sent.push(s);
    };
    f.reconcile(
      () => 't1',
      register,
      () => undefined,
    );
    expect(sent).toHaveLength(0);
    f.reconcile(
      () => null,
      register,
      () => undefined,
    ); // no owner right now
    expect(sent).toHaveLength(0);

    f.reconcile(
      () => 't2',
      register,
      () => undefined,
    );
    await nextTurn();
    expect(sent).toHaveLength(1);
    const resume = sent[0]?.resume;
    expect(sent[0]?.id).toBe(7);
    expect(resume?.recent.map((r) => r.offset)).toEqual(
      [3, 4, 5, 6, 7, 8, 9, 10].map((i) => i * 10),
    );
    expect(resume?.pushed.sort()).toEqual(['m0', 'm1']);
    expect(resume?.sinceUs).toBeLessThan(Date.now() * 1000 - 1_900_000);

    f.reconcile(
      () => 't2',
      register,
      () => undefined,
    );
    await nextTurn();
    expect(sent).toHaveLength(1);
  });

  it('a failed registration is tried again on the next round; a closed subscription is not', async () => {
    const f = new FollowedSubscriptions(1000);
    f.opened('w', spec(1), 't1');
    f.opened('w', spec(2), 't1');
    f.closed(2);
    let fail = true;
    const tried: number[] = [];
    const errors: number[] = [];
    const register = async (_ws: string, s: SubscriptionSpec): Promise<void> => {
      tried.push(s.id);
      if (fail) throw new Error('owner not ready');
    };
    f.reconcile(
      () => 't2',
      register,
      (id) => errors.push(id),
    );
    await nextTurn();
    fail = false;
    f.reconcile(
      () => 't2',
      register,
      (id) => errors.push(id),
    );
    await nextTurn();
    f.reconcile(
      () => 't2',
      register,
      (id) => errors.push(id),
    );
    await nextTurn();
    expect(tried).toEqual([1, 1]);
    expect(errors).toEqual([1]);
  });
});

describe('Subscriptions resumed at a new owner', () => {
  it('matches writes made since the move against the carried chunks, and does not push again what was pushed', () => {
    const subs = new Subscriptions();
    const w = new Workspace('w');
    const topic = unit(1, 0, 0, 0);
    const now = 10_000_000;
    subs.open('w', {
      ...spec(5),
      resume: { recent: [{ vector: topic, offset: 42 }], pushed: ['old'], sinceUs: now - 1000 },
    });
    const writes = [
      memory('old', topic, now - 500),
      memory('new', unit(1, 0.05, 0, 0), now - 100),
      memory('off-topic', unit(0, 1, 0, 0), now - 50),
    ];
    for (const m of writes) w.put(m);
    const pushes = subs.matchWrites(w, writes, now, 5);
    expect(pushes.map((p) => [p.memory.id, p.chunkOffset])).toEqual([['new', 42]]);
    // Only the subscription asked for is matched: 6 would push both on-topic memories, 5 nothing more.
    subs.open('w', {
      ...spec(6),
      resume: { recent: [{ vector: topic, offset: 7 }], pushed: [], sinceUs: now - 1000 },
    });
    expect(subs.matchWrites(w, writes, now, 5)).toEqual([]);
    expect(
      subs
        .matchWrites(w, writes, now, 6)
        .map((p) => p.memory.id)
        .sort(),
    ).toEqual(['new', 'old']);
  });
});
