/**
 * test/helpers/wait.ts `until`, which every wait in the tests goes through: the first truthy value,
 * a failure naming what it waited for (a function read at the deadline, with the last state), a
 * check that throws retried only when asked, and one that never settles cut at the deadline.
 */
import { describe, expect, it } from 'vitest';
import { until } from '../helpers/wait.ts';

describe('until', () => {
  it('resolves with the first truthy value', async () => {
    let n = 0;
    await expect(
      until(() => (++n >= 3 ? `try ${n}` : null), { what: 'three tries', everyMs: 1 }),
    ).resolves.toBe('try 3');
  });

  it('fails naming what it waited for, read at the deadline', async () => {
    let seen = 0;
    const wait = until(() => ++seen < 0, {
      what: () => `a negative count (last ${seen})`,
      deadlineMs: 30,
      everyMs: 5,
    });
    await expect(wait).rejects.toThrow(
      /timed out after 30 ms waiting for a negative count \(last \d+\)/,
    );
    expect(seen).toBeGreaterThan(1);
  });

  it('fails on a check that throws, unless told to retry it', async () => {
    let n = 0;
    const flaky = (): boolean => {
      if (++n < 3) throw new Error(`not up yet (${n})`);
      return true;
    };
    await expect(until(flaky, { what: 'up', everyMs: 1 })).rejects.toThrow('not up yet (1)');
    n = 0;
    await expect(until(flaky, { what: 'up', everyMs: 1, retryErrors: true })).resolves.toBe(true);
  });

  it('cuts a check that never settles at the deadline when told to', async () => {
    const hung = (): Promise<boolean> => new Promise<boolean>(() => {});
    const wait = until(hung, { what: 'a check that hangs', deadlineMs: 10, cutAtDeadline: true });
    await expect(wait).rejects.toThrow(/waiting for a check that hangs/);
  });
});
