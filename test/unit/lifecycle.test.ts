/**
 * The lifecycle unions (model/lifecycle): a shard's phases in its thread (shard/phases) and the
 * router's handle on a shard worker (router/handle-phases). For each, every legal move is walked
 * from a machine put in its source state, an illegal one is refused (false, the state unchanged,
 * nothing logged), and the table ARCHITECTURE.md shows is the code's.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Lifecycle, moves, type Transitions } from '../../src/model/lifecycle.ts';
import { SHARD_ROUTINE, SHARD_TRANSITIONS } from '../../src/shard/phases.ts';

/** The shortest path of moves from `from` to `to` (breadth first), or null. */
function path<S extends string>(table: Transitions<S>, from: S, to: S): S[] | null {
  const back = new Map<S, S | null>([[from, null]]);
  const queue: S[] = [from];
  while (queue.length > 0) {
    const at = queue.shift()!;
    if (at === to) {
      const out: S[] = [];
      for (let s: S | null = at; s !== null; s = back.get(s) ?? null) out.unshift(s);
      return out;
    }
    for (const next of table[at]) {
      if (!back.has(next)) {
        back.set(next, at);
        queue.push(next);
      }
    }
  }
  return null;
}

/** The table under `heading` in ARCHITECTURE.md: state → the states it may move to. */
function documented(heading: string): Record<string, string[]> {
  const text = readFileSync(new URL('../../ARCHITECTURE.md', import.meta.url), 'utf8');
  const rows = text.split('\n').filter((l) => l.startsWith(`| `) && !l.startsWith('|---'));
  const start = rows.findIndex((l) => l.startsWith(`| ${heading} |`));
  const table: Record<string, string[]> = {};
  for (const row of rows.slice(start + 1)) {
    const [state = '', to = ''] = row.split('|').slice(1, 3).map((c) => c.trim());
    if (state === '' || /\s/.test(state)) break;
    table[state] = to === '' ? [] : to.split(',').map((t) => t.trim());
  }
  return table;
}

function walks<S extends string>(name: string, table: Transitions<S>, initial: S, routine: readonly S[]): void {
  describe(name, () => {
    it('reaches every state from the initial one', () => {
      for (const state of Object.keys(table) as S[]) expect(path(table, initial, state), `${initial} → ${state}`).not.toBeNull();
    });

    it.each(moves(table))('moves %s → %s, and logs it unless the target is routine', (from, to) => {
      const lines: string[] = [];
      const m = new Lifecycle(table, { name: 'x', initial, log: (l) => lines.push(l), routine });
      for (const step of path(table, initial, from)!.slice(1)) expect(m.transition(step)).toBe(true);
      expect(m.state).toBe(from);
      const before = lines.length;
      expect(m.transition(to, 'why')).toBe(true);
      expect(m.state).toBe(to);
      expect(lines.slice(before)).toEqual(routine.includes(to) ? [] : [`x: ${from} → ${to}: why`]);
    });

    it('refuses every move the table does not list, changing nothing', () => {
      const states = Object.keys(table) as S[];
      let refused = 0;
      for (const from of states) {
        for (const to of states.filter((s) => !table[from].includes(s))) {
          const lines: string[] = [];
          const m = new Lifecycle(table, { name: 'x', initial: from, log: (l) => lines.push(l) });
          expect(m.transition(to), `${from} → ${to}`).toBe(false);
          expect(m.state).toBe(from);
          expect(lines).toEqual([]);
          refused += 1;
        }
      }
      expect(refused).toBeGreaterThan(0);
    });
  });
}

walks('shard phases', SHARD_TRANSITIONS, 'recovering', SHARD_ROUTINE);

describe('the tables ARCHITECTURE.md shows', () => {
  it('shard phases', () => {
    expect(documented('shard phase')).toEqual(SHARD_TRANSITIONS);
  });
});
