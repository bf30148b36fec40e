/**
 * @module http/connection-gate — the connection caps a stranger cannot exhaust: at most `max`
 * open connections on the REST and gRPC listeners together and `perClient` from one client (an
 * address; an IPv6 /64 counts as one). The last `healthReserve` places are kept for health checks:
 * a connection that takes one of them is served only health routes (the REST listener checks, see
 * listener.ts); gRPC connections never take them. A refused connection is told why (REST) or
 * closed (gRPC) at once, before anything is read from it. With authentication on, a connection is
 * unauthenticated until a request on it presents a valid key (`authenticated`): it must do so within
 * `authTimeoutMs`, and unauthenticated connections may hold only `unauthenticated` places in all and
 * `unauthenticatedPerClient` per client. Once the share in all is full, a newcomer closes the oldest
 * unauthenticated connection of its own client if that client is over its share, else of the
 * client holding most of them; so strangers from any number of addresses hold at most that share
 * and every new client gets its turn, while a burst of new connections from one address (a proxy,
 * an app server opening its pool, requests queued behind a busy moment) closes nothing as long as
 * there is room.
 */
import { isIPv6, type Socket } from 'node:net';
import { connectionsOpen, connectionsRefused, connectionsTimedOut } from '../metrics/index.ts';

export interface ConnectionLimits {
  /** Open connections on all listeners together. */
  max: number;
  /** Open connections from one client (0: no per-client cap). */
  perClient: number;
  /** Places below `max` that only health checks may use. */
  healthReserve: number;
  /** Whether requests need a key; when not, connections start authenticated and the rest below is unused. */
  authRequired?: boolean;
  /** Unauthenticated connections in all, and from one client. */
  unauthenticated?: number;
  unauthenticatedPerClient?: number;
  /** A connection with no authenticated request this long after it opened is closed. */
  authTimeoutMs?: number;
}

/** What the gate decided for a new connection. */
export type Admission = 'open' | 'health_only' | 'refused';

/** A connection not yet authenticated: when it came, how to close it (gently for REST: after a reply in progress). */
interface Stranger {
  socket: Socket;
  client: string;
  close: () => void;
  timer: NodeJS.Timeout;
}

export class ConnectionGate {
  readonly #limits: ConnectionLimits;
  #open = 0;
  readonly #perClient = new Map<string, number>();
  /** Unauthenticated connections by client, oldest first. */
  readonly #strangers = new Map<string, Stranger[]>();
  readonly #strangerOf = new Map<Socket, Stranger>();

  constructor(limits: ConnectionLimits) {
    this.#limits = limits;
  }

  get open(): number {
    return this.#open;
  }

  /** Unauthenticated connections open now. */
  get unauthenticated(): number {
    return this.#strangerOf.size;
  }

  /**
   * Counts `socket` in (and out again when it closes) unless a cap is reached. `healthRoom`: the
   * listener can serve health checks on the reserved places (REST can, gRPC cannot). `close`: how
   * to end it if it does not authenticate in time, or must make room (default: destroy it).
   */
  admit(
    socket: Socket,
    protocol: 'rest' | 'grpc',
    healthRoom: boolean,
    close: () => void = () => socket.destroy(),
  ): Admission {
    const client = clientOf(socket.remoteAddress ?? '');
    const { max, perClient, healthReserve } = this.#limits;
    const fromClient = this.#perClient.get(client) ?? 0;
    let admission: Admission = 'open';
    if (perClient > 0 && fromClient >= perClient) admission = 'refused';
    else if (this.#open >= max) admission = 'refused';
    else if (this.#open >= max - healthReserve) admission = healthRoom ? 'health_only' : 'refused';
    if (admission === 'refused') {
      const reason = perClient > 0 && fromClient >= perClient ? 'per_client' : 'total';
      connectionsRefused.labels(protocol, reason).inc();
      return admission;
    }
    this.#open += 1;
    this.#perClient.set(client, fromClient + 1);
    connectionsOpen.labels(protocol).inc();
    // A place kept for health checks is held a second at most (listener.ts): not a stranger's to keep.
    if (this.#limits.authRequired === true && admission === 'open')
      this.#welcomeStranger(socket, client, protocol, close);
    socket.once('close', () => {
      this.#open -= 1;
      const n = (this.#perClient.get(client) ?? 1) - 1;
      if (n === 0) this.#perClient.delete(client);
      else this.#perClient.set(client, n);
      this.#forgetStranger(socket);
      connectionsOpen.labels(protocol).dec();
    });
    return admission;
  }

  /** A request on `socket` presented a valid key: it is no longer a stranger's. */
  authenticated(socket: Socket): void {
    this.#forgetStranger(socket);
  }

  /** No request on `socket` has presented a valid key yet (with authentication on). */
  isStranger(socket: Socket): boolean {
    return this.#strangerOf.has(socket);
  }

  #welcomeStranger(
    socket: Socket,
    client: string,
    protocol: 'rest' | 'grpc',
    close: () => void,
  ): void {
    const total = this.#limits.unauthenticated ?? Infinity;
    const mine = this.#strangers.get(client) ?? [];
    if (this.#strangerOf.size >= total) {
      const over = mine.length >= (this.#limits.unauthenticatedPerClient ?? Infinity);
      this.#evict(over ? client : this.#busiestClient(), protocol);
    }
    const timer = setTimeout(() => {
      if (!this.#strangerOf.has(socket)) return;
      connectionsTimedOut.labels('auth').inc();
      this.#forgetStranger(socket);
      close();
    }, this.#limits.authTimeoutMs ?? 10_000);
    timer.unref();
    const stranger: Stranger = { socket, client, close, timer };
    this.#strangers.set(client, [...(this.#strangers.get(client) ?? []), stranger]);
    this.#strangerOf.set(socket, stranger);
  }

  /** Closes the oldest unauthenticated connection of `client` to make room. */
  #evict(client: string | null, protocol: 'rest' | 'grpc'): void {
    const oldest = client === null ? undefined : this.#strangers.get(client)?.[0];
    if (!oldest) return;
    connectionsRefused.labels(protocol, 'unauthenticated').inc();
    this.#forgetStranger(oldest.socket);
    oldest.close();
  }

  #busiestClient(): string | null {
    let busiest: string | null = null;
    let most = 0;
    for (const [client, list] of this.#strangers) {
      if (list.length > most) [busiest, most] = [client, list.length];
    }
    return busiest;
  }

  #forgetStranger(socket: Socket): void {
    const stranger = this.#strangerOf.get(socket);
    if (!stranger) return;
    clearTimeout(stranger.timer);
    this.#strangerOf.delete(socket);
    const rest = (this.#strangers.get(stranger.client) ?? []).filter((s) => s !== stranger);
    if (rest.length === 0) this.#strangers.delete(stranger.client);
    else this.#strangers.set(stranger.client, rest);
  }
}

/**
 * Who a connection is from, for the per-client caps: its address, or for IPv6 its /64 (one host
 * is commonly given a whole /64, so its addresses count as one client). An IPv4-mapped address is
 * its IPv4 address.
 */
export function clientOf(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
