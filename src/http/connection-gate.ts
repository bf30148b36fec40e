/**
 * @module http/connection-gate — the connection caps a stranger cannot exhaust (issue 23): at
 * most `max` open connections on the REST and gRPC listeners together and `perClient` from one
 * remote address. The last `healthReserve` places are kept for health checks: a connection that
 * takes one of them is served only health routes (the REST listener checks, see listener.ts);
 * gRPC connections never take them. A refused connection is told why (REST) or closed (gRPC)
 * at once, before anything is read from it.
 */
import type { Socket } from 'node:net';
import { connectionsOpen, connectionsRefused } from '../metrics/index.ts';

export interface ConnectionLimits {
  /** Open connections on all listeners together. */
  max: number;
  /** Open connections from one remote address (0: no per-address cap). */
  perClient: number;
  /** Places below `max` that only health checks may use. */
  healthReserve: number;
}

/** What the gate decided for a new connection. */
export type Admission = 'open' | 'health_only' | 'refused';

export class ConnectionGate {
  readonly #limits: ConnectionLimits;
  #open = 0;
  readonly #perClient = new Map<string, number>();

  constructor(limits: ConnectionLimits) {
    this.#limits = limits;
  }

  get open(): number {
    return this.#open;
  }

  /**
   * Counts `socket` in (and out again when it closes) unless a cap is reached. `healthRoom`: the
   * listener can serve health checks on the reserved places (REST can, gRPC cannot).
   */
  admit(socket: Socket, protocol: 'rest' | 'grpc', healthRoom: boolean): Admission {
    const address = socket.remoteAddress ?? '';
    const { max, perClient, healthReserve } = this.#limits;
    const fromClient = this.#perClient.get(address) ?? 0;
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
    this.#perClient.set(address, fromClient + 1);
    connectionsOpen.labels(protocol).inc();
    socket.once('close', () => {
      this.#open -= 1;
      const n = (this.#perClient.get(address) ?? 1) - 1;
      if (n === 0) this.#perClient.delete(address);
      else this.#perClient.set(address, n);
      connectionsOpen.labels(protocol).dec();
    });
    return admission;
  }
}
