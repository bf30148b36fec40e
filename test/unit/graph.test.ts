/** Graph: one edge per (source, target, type), indexed both ways; removal by edge and by node. */
import { describe, expect, it } from 'vitest';
import type { Edge, EdgeType } from '../../src/model/edge.ts';
import { Graph } from '../../src/shard/index/graph.ts';

function e(source: string, target: string, type: EdgeType = 'related_to', confidence = 1): Edge {
  return { source_id: source, target_id: target, edge_type: type, confidence, timestamp_us: 1 };
}

function sorted(edges: Iterable<Edge>): Edge[] {
  const key = (x: Edge): string => `${x.source_id}>${x.target_id}:${x.edge_type}`;
  return [...edges].sort((a, b) => key(a).localeCompare(key(b)));
}

describe('Graph', () => {
  it('put() indexes an edge in both directions', () => {
    const g = new Graph();
    g.put(e('a', 'b', 'caused_by'));
    expect(g.outgoing('a')).toEqual([e('a', 'b', 'caused_by')]);
    expect(g.incoming('b')).toEqual([e('a', 'b', 'caused_by')]);
    expect(g.outgoing('b')).toEqual([]);
    expect(g.incoming('a')).toEqual([]);
    expect(g.edgeCount).toBe(1);
  });

  it('putting the same (source, target, type) again replaces it', () => {
    const g = new Graph();
    g.put(e('a', 'b', 'related_to', 0.2));
    g.put(e('a', 'b', 'related_to', 0.9));
    expect(g.edgeCount).toBe(1);
    expect(g.outgoing('a')).toEqual([e('a', 'b', 'related_to', 0.9)]);
    expect(g.incoming('b')).toEqual([e('a', 'b', 'related_to', 0.9)]);
    expect([...g.all()]).toHaveLength(1);
  });

  it('different types between the same memories are different edges', () => {
    const g = new Graph();
    g.put(e('a', 'b', 'related_to'));
    g.put(e('a', 'b', 'contradicts'));
    g.put(e('b', 'a', 'related_to'));
    expect(g.edgeCount).toBe(3);
    expect(sorted(g.all())).toEqual(
      sorted([e('a', 'b', 'related_to'), e('a', 'b', 'contradicts'), e('b', 'a', 'related_to')]),
    );
  });

  it('remove() takes one edge out of both indexes and says whether it existed', () => {
    const g = new Graph();
    g.put(e('a', 'b'));
    g.put(e('a', 'c'));
    expect(g.remove('a', 'b', 'related_to')).toBe(true);
    expect(g.remove('a', 'b', 'related_to')).toBe(false);
    expect(g.remove('a', 'c', 'caused_by')).toBe(false);
    expect(g.edgeCount).toBe(1);
    expect(g.outgoing('a')).toEqual([e('a', 'c')]);
    expect(g.incoming('b')).toEqual([]);
    expect(g.incoming('c')).toEqual([e('a', 'c')]);
  });

  it('removeNode() removes every edge touching the node, in and out, and returns them', () => {
    const g = new Graph();
    g.put(e('a', 'b'));
    g.put(e('c', 'a', 'caused_by'));
    g.put(e('a', 'd', 'followed_by'));
    g.put(e('b', 'c'));
    const removed = g.removeNode('a');
    expect(sorted(removed)).toEqual(
      sorted([e('a', 'b'), e('c', 'a', 'caused_by'), e('a', 'd', 'followed_by')]),
    );
    expect(g.edgeCount).toBe(1);
    expect([...g.all()]).toEqual([e('b', 'c')]);
    expect(g.outgoing('a')).toEqual([]);
    expect(g.incoming('a')).toEqual([]);
    expect(g.incoming('b')).toEqual([]);
    expect(g.outgoing('c')).toEqual([]);
    expect(g.removeNode('nobody')).toEqual([]);
  });

  it('a self-loop is counted once and removed cleanly', () => {
    const g = new Graph();
    g.put(e('a', 'a'));
    g.put(e('a', 'b'));
    expect(g.edgeCount).toBe(2);
    g.removeNode('a');
    expect(g.edgeCount).toBe(0);
    expect([...g.all()]).toEqual([]);
    expect(g.incoming('b')).toEqual([]);
  });

  it('edgeCount always equals the number of edges all() yields', () => {
    const g = new Graph();
    const nodes = ['a', 'b', 'c', 'd', 'e'];
    const types: EdgeType[] = ['related_to', 'caused_by'];
    let seed = 11;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const model = new Map<string, Edge>();
    for (let step = 0; step < 3000; step++) {
      const s = nodes[rand(5)] as string;
      const t = nodes[rand(5)] as string;
      const y = types[rand(2)] as EdgeType;
      const op = rand(10);
      if (op < 6) {
        g.put(e(s, t, y, step));
        model.set(`${s}>${t}:${y}`, e(s, t, y, step));
      } else if (op < 9) {
        expect(g.remove(s, t, y)).toBe(model.delete(`${s}>${t}:${y}`));
      } else {
        g.removeNode(s);
        for (const [k, v] of model) if (v.source_id === s || v.target_id === s) model.delete(k);
      }
      expect(g.edgeCount).toBe(model.size);
    }
    expect(sorted(g.all())).toEqual(sorted(model.values()));
    for (const n of nodes) {
      expect(sorted(g.incoming(n))).toEqual(
        sorted([...model.values()].filter((x) => x.target_id === n)),
      );
      expect(sorted(g.outgoing(n))).toEqual(
        sorted([...model.values()].filter((x) => x.source_id === n)),
      );
    }
  });
  it('finds an existing edge from either end when one end is a hub (lists past the short-list size)', () => {
    const g = new Graph();
    for (let i = 0; i < 40; i++) g.put(e(`m${i}`, 'hub', 'related_to'));
    for (let i = 0; i < 30; i++) g.put(e('hub', `m${i}`, 'caused_by'));
    // Out of m5 is short, into hub is long: the edge is found from the short side and replaced.
    g.put(e('m5', 'hub', 'related_to', 0.5));
    // Out of hub is long, into m7 is short.
    g.put(e('hub', 'm7', 'caused_by', 0.25));
    expect(g.edgeCount).toBe(70);
    expect(g.incoming('hub').filter((x) => x.source_id === 'm5')).toEqual([
      e('m5', 'hub', 'related_to', 0.5),
    ]);
    expect(g.outgoing('hub').filter((x) => x.target_id === 'm7')).toEqual([
      e('hub', 'm7', 'caused_by', 0.25),
    ]);
    expect(g.remove('m5', 'hub', 'caused_by')).toBe(false);
    expect(g.remove('hub', 'm39', 'caused_by')).toBe(false);
    expect(g.remove('m39', 'hub', 'related_to')).toBe(true);
    expect(g.edgeCount).toBe(69);
    expect(g.incoming('hub')).toHaveLength(39);
  });
});

describe('Graph.contradicting (the contradictions list reads it)', () => {
  it('holds exactly the memories with a contradicts edge, through writes, removals and removed nodes', () => {
    const g = new Graph();
    const e = (s: string, t: string, type: 'contradicts' | 'related_to') => ({
      source_id: s,
      target_id: t,
      edge_type: type,
      confidence: 0.9,
      timestamp_us: 1,
    });
    g.put(e('a', 'b', 'contradicts'));
    g.put(e('b', 'a', 'contradicts'));
    g.put(e('c', 'd', 'related_to'));
    g.put(e('a', 'c', 'contradicts'));
    g.put(e('a', 'c', 'contradicts')); // written again: replaced, not counted twice
    expect(new Set(g.contradicting())).toEqual(new Set(['a', 'b', 'c']));
    g.remove('a', 'c', 'contradicts');
    expect(new Set(g.contradicting())).toEqual(new Set(['a', 'b']));
    g.remove('a', 'b', 'contradicts');
    expect(new Set(g.contradicting())).toEqual(new Set(['a', 'b']));
    g.removeNode('b');
    expect([...g.contradicting()]).toEqual([]);
  });
});
