/**
 * @module native-bench/suite/grpc-client — a hebbs.v1 client generated at run time from
 * proto/hebbs.proto with @grpc/proto-loader (the server's loader options: uint64 as decimal
 * strings, bytes as Buffer, enums as names). One HTTP/2 channel; every call carries the key.
 * The proto is loaded here rather than through src/grpc/server.ts so the suite does not pull in
 * the server's module graph.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const PROTO_PATH = fileURLToPath(new URL('../../proto/hebbs.proto', import.meta.url));
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  arrays: true,
  oneofs: true,
};
const DEADLINE_MS = 60_000;

export type ServiceName = 'MemoryService' | 'SubscribeService';

type UnaryCallback = (err: grpc.ServiceError | null, res: unknown) => void;
type UnaryMethod = (
  req: object,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: UnaryCallback,
) => grpc.ClientUnaryCall;
type DuplexMethod = (
  md: grpc.Metadata,
  opts: grpc.CallOptions,
) => grpc.ClientDuplexStream<object, unknown>;

let hebbs: grpc.GrpcObject | null = null;

function loadHebbs(): grpc.GrpcObject {
  if (hebbs) return hebbs;
  const root = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_PATH, LOADER_OPTIONS));
  hebbs = (root['hebbs'] as grpc.GrpcObject)['v1'] as grpc.GrpcObject;
  return hebbs;
}

function method<T>(client: grpc.Client, name: string): T {
  const fn = (client as unknown as Record<string, unknown>)[name];
  if (typeof fn !== 'function') throw new Error(`gRPC client has no method ${name}`);
  return fn.bind(client) as T;
}

export class GrpcClient {
  readonly #clients: Record<ServiceName, grpc.Client>;
  readonly #metadata = new grpc.Metadata();

  /** `host` defaults to 127.0.0.1 (the suite's own server); side-by-side runs name any hebbs.v1 server. */
  constructor(opts: { port: number; apiKey: string; host?: string }) {
    const pkg = loadHebbs();
    const address = `${opts.host ?? '127.0.0.1'}:${opts.port}`;
    const memory = new (pkg['MemoryService'] as grpc.ServiceClientConstructor)(
      address,
      grpc.credentials.createInsecure(),
    );
    // The second client shares the first one's channel.
    const subscribe = new (pkg['SubscribeService'] as grpc.ServiceClientConstructor)(
      address,
      grpc.credentials.createInsecure(),
      { channelOverride: memory.getChannel() },
    );
    this.#clients = { MemoryService: memory, SubscribeService: subscribe };
    if (opts.apiKey !== '') this.#metadata.set('authorization', `Bearer ${opts.apiKey}`);
  }

  /** One unary call; the reply is typed by the caller (messages are plain objects). */
  unary<T>(service: ServiceName, name: string, req: object): Promise<T> {
    const fn = method<UnaryMethod>(this.#clients[service], name);
    return new Promise((resolve, reject) => {
      fn(req, this.#metadata, { deadline: Date.now() + DEADLINE_MS }, (err, res) =>
        err ? reject(err) : resolve(res as T),
      );
    });
  }

  /** Opens SubscribeService.Subscribe (bidirectional). */
  subscribeStream(): grpc.ClientDuplexStream<object, unknown> {
    return method<DuplexMethod>(this.#clients.SubscribeService, 'Subscribe')(this.#metadata, {});
  }

  close(): void {
    this.#clients.SubscribeService.close();
    this.#clients.MemoryService.close();
  }
}
