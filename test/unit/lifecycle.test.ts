/**
 * The lifecycle unions (model/lifecycle): a shard's phases in its thread (shard/phases) and the
 * router's handle on a shard (router/shard-handle), which outlives its workers. For each, every legal move is walked
 * from a machine put in its source state, an illegal one is refused (false, the state unchanged,
 * nothing logged), and the table ARCHITECTURE.md shows is the code's.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Lifecycle, moves, type Transitions } from '../../src/model/lifecycle.ts';
import type { Worker } from 'node:worker_threads';
import { HANDLE_ROUTINE, HANDLE_TRANSITIONS, ShardHandle } from '../../src/router/shard-handle.ts';
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
    const [state = '', to = ''] = row
      .split('|')
      .slice(1, 3)
      .map((c) => c.trim());
    if (state === '' || /\s/.test(state)) break;
    table[state] = to === '' ? [] : to.split(',').map((t) => t.trim());
  }
  return table;
}

function walks<S extends string>(
  name: string,
  table: Transitions<S>,
  initial: S,
  routine: readonly S[],
): void {
  describe(name, () => {
    it('reaches every state from the initial one', () => {
      for (const state of Object.keys(table) as S[])
        expect(path(table, initial, state), `${initial} → ${state}`).not.toBeNull();
    });

    it.each(moves(table))('moves %s → %s, and logs it unless the target is routine', (from, to) => {
      const lines: string[] = [];
      const m = new Lifecycle(table, { name: 'x', initial, log: (l) => lines.push(l), routine });
      for (const step of path(table, initial, from)!.slice(1))
        expect(m.transition(step)).toBe(true);
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
walks('shard handle phases', HANDLE_TRANSITIONS, 'starting', HANDLE_ROUTINE);

/** A stand-in for a worker thread: the handle only posts to it. */
const worker = (): Worker => ({ postMessage: () => {} }) as unknown as Worker;

describe('a shard handle', () => {
  it('keeps why it went down through the restart, until the next worker is ready', () => {
    const lines: string[] = [];
    const h = new ShardHandle(3, worker(), (l) => lines.push(l));
    expect([h.phase, h.accepting, h.recovering]).toEqual(['starting', false, true]);
    h.ready();
    expect([h.phase, h.accepting]).toEqual(['ready', true]);
    expect(h.wentDown({ cause: 'storage', why: 'ENOSPC' })).toBe(true);
    expect([h.phase, h.accepting, h.down]).toEqual([
      'log-failed',
      true,
      { cause: 'storage', why: 'ENOSPC' },
    ]);
    // A crash of a shard already down changes nothing: the restart it waits for covers it.
    expect(h.wentDown({ cause: 'crash', why: 'boom' })).toBe(false);
    expect(h.down?.cause).toBe('storage');
    expect(h.restarting()).toBe(true);
    h.attach(worker());
    expect([h.phase, h.accepting, h.recovering, h.down?.why]).toEqual([
      'restarting',
      false,
      true,
      'ENOSPC',
    ]);
    h.ready();
    expect([h.phase, h.down, h.restartAt]).toEqual(['ready', null, null]);
    expect(lines).toEqual(['shard 3: log-failed → restarting: ENOSPC']);
  });

  it('once stopping, refuses to go down or to restart', () => {
    const h = new ShardHandle(0, worker(), () => {});
    h.ready();
    expect(h.stopping()).toBe(true);
    expect(h.stopping()).toBe(false);
    expect(h.wentDown({ cause: 'storage', why: 'ENOSPC' })).toBe(false);
    expect(h.restarting()).toBe(false);
    h.stopped();
    expect([h.phase, h.down]).toEqual(['stopped', null]);
  });
});

describe('the tables ARCHITECTURE.md shows', () => {
  it('shard phases', () => {
    expect(documented('shard phase')).toEqual(SHARD_TRANSITIONS);
  });

  it('shard handle phases', () => {
    expect(documented('handle phase')).toEqual(HANDLE_TRANSITIONS);
  });
});
