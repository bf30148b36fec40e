/**
 * @module grpc/server — the gRPC front (hebbs.v1 over plaintext HTTP/2). The only folder that
 * imports @grpc/grpc-js. Handlers decode, call the same verbs as REST, encode; errors map through
 * errors/codes.ts.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Services } from '../verbs/context.ts';
import { Undecodable } from './call.ts';
import { healthService } from './health-service.ts';
import { memoryService } from './memory-service.ts';
import { reflectService } from './reflect-service.ts';
import { useResponseEncoders } from './response-encoder.ts';
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
  const wrap = ([method, def]: [string, grpc.MethodDefinition<unknown, unknown>]): [string, grpc.MethodDefinition<unknown, unknown>] => [
    method,
    {
      ...def,
      requestDeserialize: (bytes: Buffer): unknown => {
        try {
          return def.requestDeserialize(bytes);
        } catch (err) {
          return new Undecodable(err instanceof Error ? err.message : String(err));
        }
      },
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

export async function startGrpc(svc: Services): Promise<GrpcServer> {
  const pkg = loadHebbs();
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 16 * 1024 * 1024 });
  server.addService(serviceOf(pkg, 'MemoryService'), memoryService(svc));
  server.addService(serviceOf(pkg, 'ReflectService'), reflectService(svc));
  server.addService(serviceOf(pkg, 'HealthService'), healthService(svc));
  server.addService(serviceOf(pkg, 'SubscribeService'), subscribeService(svc));
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${svc.config.bind}:${svc.config.grpcPort}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  let drained: Promise<void> | null = null;
  return {
    port,
    drain: () => (drained ??= new Promise<void>((resolve) => server.tryShutdown(() => resolve()))),
    close: () => server.forceShutdown(),
  };
}
