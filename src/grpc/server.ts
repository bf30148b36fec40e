/**
 * @module grpc/server — the gRPC front (hebbs.v1 over plaintext HTTP/2). The only folder that
 * imports @grpc/grpc-js. Handlers decode, call the same verbs as REST, encode; errors map through
 * errors/codes.ts.
 */
import net, { type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { connectionsTimedOut } from '../metrics/index.ts';
import { wellFormedDeep } from '../model/unicode.ts';
import type { Services } from '../verbs/context.ts';
import { invalidUtf8Field, onAuthenticated, Undecodable } from './call.ts';
import { healthService } from './health-service.ts';
import { memoryService } from './memory-service.ts';
import { reflectService } from './reflect-service.ts';
import { HAND_WRITTEN, useResponseEncoders } from './response-encoder.ts';
import { subscribeService } from './subscribe-service.ts';

export const PROTO_PATH = fileURLToPath(new URL('../../proto/hebbs.proto', import.meta.url));

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  arrays: true,
  oneofs: true,
};

/**
 * The loaded `hebbs.v1` package (also used by tests to build clients). Replies that carry memories
 * are written by grpc/response-encoder.ts.
 */
export function loadHebbs(): grpc.GrpcObject {
  const def = protoLoader.loadSync(PROTO_PATH, LOADER_OPTIONS);
  useResponseEncoders(def);
  const root = grpc.loadPackageDefinition(def) as grpc.GrpcObject;
  return (root['hebbs'] as grpc.GrpcObject)['v1'] as grpc.GrpcObject;
}

/** The service's definition with every request deserializer made total (see `Undecodable`). */
function serviceOf(pkg: grpc.GrpcObject, name: string): grpc.ServiceDefinition {
  const service = (pkg[name] as grpc.ServiceClientConstructor).service;
  const wrap = ([method, def]: [string, grpc.MethodDefinition<unknown, unknown>]): [
    string,
    grpc.MethodDefinition<unknown, unknown>,
  ] => [
    method,
    {
      ...def,
      requestDeserialize: (bytes: Buffer): unknown => {
        try {
          const message = def.requestDeserialize(bytes);
          const notUtf8 = invalidUtf8Field(message, bytes);
          return notUtf8 === null ? message : new Undecodable(notUtf8, { field: true });
        } catch (err) {
          return new Undecodable(err instanceof Error ? err.message : String(err));
        }
      },
      // protobufjs writes a lone surrogate as bytes that are not UTF-8: text stored before the
      // check is repaired on the way out (the hand-written encoders' Buffer.write does the same).
      responseSerialize: HAND_WRITTEN.has(def.responseSerialize)
        ? def.responseSerialize
        : (value: unknown): Buffer => def.responseSerialize(wellFormedDeep(value)),
    },
  ];
  return Object.fromEntries(Object.entries(service).map(wrap));
}

export interface GrpcServer {
  readonly port: number;
  /**
   * `tryShutdown`: stops listening and sends GOAWAY on every connection, so new calls fail with
   * UNAVAILABLE while calls in flight finish. Resolves once they have.
   */
  drain(): Promise<void>;
  /** `forceShutdown`: cancels whatever is still running and closes every connection. */
  close(): void;
}

/** Keepalive: the server pings a silent client this often, and drops it if the ping is not answered in time. */
const KEEPALIVE_TIME_MS = 60_000;
const KEEPALIVE_TIMEOUT_MS = 20_000;
/** A connection with no call for this long is closed (GOAWAY; clients reconnect when they next call). */
const MAX_CONNECTION_IDLE_MS = 5 * 60_000;

/**
 * Decides whether a new connection may stay open (the shared connection caps of
 * http/connection-gate); false closes it before anything is read.
 */
export type AdmitConnection = (socket: Socket) => boolean;

/**
 * Listens with its own net.Server and hands the connections the caps admit to grpc-js (a
 * connection injector), so the same caps hold on both ports.
 */
export async function startGrpc(
  svc: Services,
  admit: AdmitConnection,
  authenticated: (socket: Socket) => void = () => undefined,
): Promise<GrpcServer> {
  const pkg = loadHebbs();
  const server = new grpc.Server({
    'grpc.max_receive_message_length': svc.config.grpcMaxMessageBytes,
    'grpc.max_concurrent_streams': svc.config.grpcMaxStreams,
    'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
    'grpc.max_connection_idle_ms': MAX_CONNECTION_IDLE_MS,
    // Channelz (per-call counters and traces for grpc's debugging service, which is not served
    // here) took ~4 % of the router's CPU per get.
    'grpc.enable_channelz': 0,
  });
  server.addService(serviceOf(pkg, 'MemoryService'), memoryService(svc));
  server.addService(serviceOf(pkg, 'ReflectService'), reflectService(svc));
  server.addService(serviceOf(pkg, 'HealthService'), healthService(svc));
  server.addService(serviceOf(pkg, 'SubscribeService'), subscribeService(svc));
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const sockets = new Set<Socket>();
  // Connections by peer (as grpc-js names a call's): a call with a valid key marks its connection authenticated.
  const byPeer = new Map<string, Socket>();
  onAuthenticated(svc, (peer) => {
    const socket = byPeer.get(peer);
    if (socket) authenticated(socket);
  });
  const listener = net.createServer({ noDelay: true }, (socket) => {
    if (!admit(socket)) return void socket.destroy();
    sockets.add(socket);
    const peer = peerName(socket);
    byPeer.set(peer, socket);
    socket.once('close', () => {
      sockets.delete(socket);
      byPeer.delete(peer);
    });
    injector.injectConnection(socket);
    // A connection that has sent nothing (not even the HTTP/2 preface) by the headers timeout goes.
    const silent = setTimeout(() => {
      if (socket.bytesRead > 0 || socket.destroyed) return;
      connectionsTimedOut.labels('grpc_preface').inc();
      socket.destroy();
    }, svc.config.headersTimeoutMs);
    silent.unref();
    socket.once('close', () => clearTimeout(silent));
  });
  const port = await new Promise<number>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(svc.config.grpcPort, svc.config.bind, () => {
      listener.off('error', reject);
      const address = listener.address();
      resolve(typeof address === 'object' && address !== null ? address.port : svc.config.grpcPort);
    });
  });
  let drained: Promise<void> | null = null;
  return {
    port,
    drain: () =>
      (drained ??= new Promise<void>((resolve) => {
        listener.close();
        server.tryShutdown(() => resolve());
      })),
    close: () => {
      listener.close();
      server.forceShutdown();
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** A socket's peer as grpc-js writes it (`call.getPeer()`): `address:port`, an IPv6 address in brackets. */
function peerName(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return `${net.isIPv6(address) ? `[${address}]` : address}:${socket.remotePort ?? 0}`;
}
