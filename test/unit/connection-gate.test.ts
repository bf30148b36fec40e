/**
 * The connection gate's share for strangers (issue 48, item 3): unauthenticated connections hold
 * at most their share in all and per client (an IPv6 /64 is one client); a newcomer over a share
 * closes the oldest stranger of its own client, or of the client holding most; a connection that
 * authenticates leaves the share; one that does not is closed at the deadline.
 */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientOf, ConnectionGate } from '../../src/http/connection-gate.ts';

class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string) {
    super();
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }
}

const gate = (): ConnectionGate =>
  new ConnectionGate({
    max: 100,
    perClient: 50,
    healthReserve: 0,
    authRequired: true,
    unauthenticated: 6,
    unauthenticatedPerClient: 3,
    authTimeoutMs: 1000,
  });
const open = (g: ConnectionGate, address: string): FakeSocket => {
  const s = new FakeSocket(address);
  expect(g.admit(s as unknown as Socket, 'rest', true)).toBe('open');
  return s;
};

afterEach(() => vi.useRealTimers());

describe('connection gate: strangers', () => {
  it('with the share in all full, a client over its own share closes its own oldest stranger', () => {
    const g = gate();
    const a = [open(g, '10.0.0.1'), open(g, '10.0.0.1'), open(g, '10.0.0.1')];
    const busier = [0, 1, 2, 3].map(() => open(g, '10.0.0.2')); // the total (6) is full at the first three
    expect(busier[0]?.destroyed).toBe(true); // the busiest (10.0.0.2, over its share of 3) lost its oldest
    const fourth = open(g, '10.0.0.1');
    expect(a.map((s) => s.destroyed)).toEqual([true, false, false]);
    expect(fourth.destroyed).toBe(false);
    expect(busier.slice(1).some((s) => s.destroyed)).toBe(false);
    expect(g.unauthenticated).toBe(6);
  });

  it('a burst from one client closes nothing while the share in all has room (a proxy, a pool opening)', () => {
    const g = gate();
    const burst = [0, 1, 2, 3, 4, 5].map(() => open(g, '10.0.0.1')); // twice its share of 3, the total's 6
    expect(burst.some((s) => s.destroyed)).toBe(false);
    expect(g.unauthenticated).toBe(6);
    const seventh = open(g, '10.0.0.1'); // now the total is full: its own oldest goes
    expect(burst.map((s) => s.destroyed)).toEqual([true, false, false, false, false, false]);
    expect(seventh.destroyed).toBe(false);
  });

  it('past the total share, the oldest stranger of the client holding most goes, not a newcomer from elsewhere', () => {
    const g = gate();
    const busy = [open(g, '10.0.0.1'), open(g, '10.0.0.1'), open(g, '10.0.0.1')];
    const others = [open(g, '10.0.0.2'), open(g, '10.0.0.3'), open(g, '10.0.0.4')];
    const tenant = open(g, '10.0.0.9');
    expect(busy[0]?.destroyed).toBe(true);
    expect([...others, tenant].some((s) => s.destroyed)).toBe(false);
    expect(g.unauthenticated).toBe(6);
  });

  it('an authenticated connection leaves the share and outlives the deadline; a stranger does not', () => {
    vi.useFakeTimers();
    const g = gate();
    const tenant = open(g, '10.0.0.9');
    const stranger = open(g, '10.0.0.1');
    g.authenticated(tenant as unknown as Socket);
    expect(g.isStranger(tenant as unknown as Socket)).toBe(false);
    expect(g.isStranger(stranger as unknown as Socket)).toBe(true);
    vi.advanceTimersByTime(1001);
    expect(stranger.destroyed).toBe(true);
    expect(tenant.destroyed).toBe(false);
    expect(g.open).toBe(1);
  });

  it('counts an IPv6 /64 as one client, and an IPv4-mapped address as its IPv4 address', () => {
    expect(clientOf('2001:db8:1:2:aaaa::1')).toBe(clientOf('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(clientOf('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(clientOf('2001:db8:1:3::1')).not.toBe(clientOf('2001:db8:1:2::1'));
    expect(clientOf('::1')).toBe('0:0:0:0::/64');
    expect(clientOf('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(clientOf('127.0.0.2')).toBe('127.0.0.2');
    const g = gate();
    const other = [open(g, '10.0.0.5'), open(g, '10.0.0.5')];
    const v6 = ['::1', '::2', '::3', '::4', '::5'].map((tail) => open(g, `2001:db8${tail}`));
    // The total (6) is full at the fifth: as one client over its share, the /64 loses its own
    // oldest, not 10.0.0.5's (which would go, as the busiest, if each address counted alone).
    expect(v6.map((s) => s.destroyed)).toEqual([true, false, false, false, false]);
    expect(other.some((s) => s.destroyed)).toBe(false);
  });

  it('with authentication off, nothing is a stranger', () => {
    const g = new ConnectionGate({
      max: 10,
      perClient: 0,
      healthReserve: 0,
      authRequired: false,
      unauthenticated: 1,
      unauthenticatedPerClient: 1,
      authTimeoutMs: 1,
    });
    const all = [open(g, '10.0.0.1'), open(g, '10.0.0.1'), open(g, '10.0.0.1')];
    expect(all.some((s) => s.destroyed)).toBe(false);
    expect(g.unauthenticated).toBe(0);
  });
});
