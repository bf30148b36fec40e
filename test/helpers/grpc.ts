/**
 * A small hebbs.v1 gRPC client for tests. The client is generated at run time from
 * proto/hebbs.proto with the server's own loader options, so uint64 fields arrive as decimal
 * strings, enums as names, bytes as Buffers, proto3 `optional` fields are absent when unset and
 * unset messages are null. The reply types below describe exactly that decoded shape.
 */
import * as grpc from '@grpc/grpc-js';
import { expect } from 'vitest';
import type { Struct, StructValue } from '../../src/grpc/messages.ts';
import { loadHebbs } from '../../src/grpc/server.ts';
import type { JsonObject, JsonValue } from '../../src/model/memory.ts';

// ─── decoded replies ─────────────────────────────────────────────────────────────────────

export interface MemoryMsg {
  memory_id: Buffer;
  content: string;
  importance: number;
  context: Struct | null;
  entity_id?: string;
  embedding: number[];
  created_at: string;
  updated_at: string;
  last_accessed_at: string;
  access_count: string;
  decay_score: number;
  kind: string;
  device_id?: string;
  logical_clock: string;
  source_memory_ids: Buffer[];
  expires_at_us?: string;
  occurred_at: string;
  speaker?: string;
  conversation_id?: string;
  message_id?: string;
}

export interface StrategyDetailMsg {
  strategy_type: string;
  relevance: number;
  distance?: number;
  timestamp?: string;
  rank?: number;
  depth?: number;
  causal_edge_type?: string;
  seed_id?: Buffer;
  embedding_similarity?: number;
  structural_similarity?: number;
}

export interface RecallResultMsg {
  memory: MemoryMsg;
  score: number;
  strategy_details: StrategyDetailMsg[];
}

export interface SubscribePushMsg {
  subscription_id: string;
  memory: MemoryMsg | null;
  confidence: number;
  push_timestamp_us: string;
  sequence_number: string;
  score: number;
  strategy: string;
  chunk_offset?: string;
}

type Empty = Record<string, never>;

/** Every unary RPC, by service and method, with its decoded reply. */
export interface HebbsReplies {
  MemoryService: {
    Remember: { memory: MemoryMsg };
    Get: { memory: MemoryMsg };
    Recall: {
      results: RecallResultMsg[];
      strategy_errors: Array<{ strategy: string; message: string }>;
    };
    Prime: { results: RecallResultMsg[]; temporal_count: number; similarity_count: number };
    Revise: { memory: MemoryMsg };
    Forget: {
      forgotten_count: string;
      cascade_count: string;
      truncated: boolean;
      tombstone_count: string;
    };
    SetPolicy: { applied: boolean };
    IngestMessages: { memory_ids: Buffer[]; created: number; existing: number };
  };
  ReflectService: {
    Reflect: {
      insights_created: string;
      clusters_found: string;
      clusters_processed: string;
      memories_processed: string;
    };
    GetInsights: { insights: MemoryMsg[] };
    // Cluster prompts and pending contradictions are left opaque: no test reads inside them yet.
    ReflectPrepare: {
      session_id: string;
      memories_processed: string;
      clusters: unknown[];
      existing_insight_count: string;
    };
    ReflectCommit: { insights_created: string };
    ContradictionPrepare: { candidates: unknown[] };
    ContradictionCommit: {
      contradictions_confirmed: string;
      revisions_created: string;
      dismissed: string;
    };
  };
  HealthService: {
    Check: { status: string; version: string; memory_count: string; uptime_seconds: string };
  };
  SubscribeService: {
    Feed: Empty;
    CloseSubscription: Empty;
  };
}

export type ServiceName = keyof HebbsReplies;
export type MethodOf<S extends ServiceName> = keyof HebbsReplies[S] & string;

// ─── the client ──────────────────────────────────────────────────────────────────────────

/** Who a call is made as: `key` is sent as `Bearer <key>`, `authorization` as the raw value; `{}` sends no metadata. */
export interface GrpcAuth {
  key?: string;
  authorization?: string;
  /** Further metadata sent with the call (e.g. a W3C `traceparent`). */
  extra?: Record<string, string>;
}

export interface GrpcClient {
  /** One unary call; rejects with the `grpc.ServiceError`. `auth` defaults to the client's. */
  call<S extends ServiceName, M extends MethodOf<S>>(
    svc: S,
    method: M,
    req: object,
    auth?: GrpcAuth,
  ): Promise<HebbsReplies[S][M]>;
  /** The same with a method named at run time; the reply is not typed. */
  call(svc: ServiceName, method: string, req: object, auth?: GrpcAuth): Promise<unknown>;
  /** Opens `SubscribeService.Subscribe` (a bidirectional stream on the wire). */
  subscribe(auth?: GrpcAuth): grpc.ClientDuplexStream<object, SubscribePushMsg>;
  close(): void;
}

type UnaryFn = (
  req: object,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res: unknown) => void,
) => void;
type SubscribeFn = (md: grpc.Metadata) => grpc.ClientDuplexStream<object, SubscribePushMsg>;

let pkg: grpc.GrpcObject | undefined;

export function grpcMetadata(auth: GrpcAuth): grpc.Metadata {
  const md = new grpc.Metadata();
  if (auth.authorization !== undefined) md.set('authorization', auth.authorization);
  else if (auth.key !== undefined) md.set('authorization', `Bearer ${auth.key}`);
  for (const [k, v] of Object.entries(auth.extra ?? {})) md.set(k, v);
  return md;
}

/**
 * Clients for every hebbs.v1 service on `127.0.0.1:port`, made on first use.
 * `auth`: the default for every call; `deadlineMs`: each unary call's deadline (15 s).
 */
export function connectGrpc(
  port: number,
  opts: { auth?: GrpcAuth; deadlineMs?: number } = {},
): GrpcClient {
  const { auth: defaultAuth = {}, deadlineMs = 15_000 } = opts;
  const clients = new Map<ServiceName, grpc.Client>();
  const client = (svc: ServiceName): grpc.Client => {
    let c = clients.get(svc);
    if (!c) {
      pkg ??= loadHebbs();
      c = new (pkg[svc] as grpc.ServiceClientConstructor)(
        `127.0.0.1:${port}`,
        grpc.credentials.createInsecure(),
      );
      clients.set(svc, c);
    }
    return c;
  };
  const call = (
    svc: ServiceName,
    method: string,
    req: object,
    auth: GrpcAuth = defaultAuth,
  ): Promise<unknown> => {
    const c = client(svc);
    const fn = (c as unknown as Record<string, UnaryFn | undefined>)[method];
    if (!fn) throw new Error(`${svc} has no method ${method}`);
    const md = grpcMetadata(auth);
    return new Promise((resolve, reject) =>
      fn.call(c, req, md, { deadline: Date.now() + deadlineMs }, (err, res) =>
        err ? reject(err) : resolve(res),
      ),
    );
  };
  return {
    call: call as GrpcClient['call'],
    subscribe: (auth = defaultAuth) => {
      const c = client('SubscribeService');
      return (c as unknown as { Subscribe: SubscribeFn }).Subscribe.call(c, grpcMetadata(auth));
    },
    close: () =>
      clients.forEach((c) => {
        c.close();
      }),
  };
}

/** Awaits a call that must fail, and checks its status code and that it says why. */
export async function failsWith(
  p: Promise<unknown>,
  code: grpc.status,
  label?: string,
): Promise<grpc.ServiceError> {
  const at = label === undefined ? '' : `${label}: `;
  const err = await p.then(
    (res) => {
      throw new Error(
        `${at}expected status ${grpc.status[code]}, got a response: ${JSON.stringify(res)}`,
      );
    },
    (e: unknown) => e as grpc.ServiceError,
  );
  expect(grpc.status[err.code], `${at}${err.details}`).toBe(grpc.status[code]);
  expect(err.details.length).toBeGreaterThan(0);
  return err;
}

// ─── google.protobuf.Struct, written independently of src/grpc/codec.ts ──────────────────

/** Plain JSON → a Struct as a request carries it. */
export function struct(obj: JsonObject): Struct {
  return { fields: Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, structValue(v)])) };
}

function structValue(v: JsonValue): StructValue {
  if (v === null) return { nullValue: 'NULL_VALUE' };
  if (Array.isArray(v)) return { listValue: { values: v.map(structValue) } };
  if (typeof v === 'object') return { structValue: struct(v) };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'number') return { numberValue: v };
  return { boolValue: v };
}

/** A decoded Struct back to plain JSON (the loader names the set member in `kind`: oneofs: true). */
export function plain(s: Struct | null | undefined): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(s?.fields ?? {})) out[k] = unvalue(v);
  return out;
}

function unvalue(v: StructValue): JsonValue {
  switch (v.kind) {
    case 'structValue':
      return plain(v.structValue);
    case 'listValue':
      return (v.listValue?.values ?? []).map(unvalue);
    case 'stringValue':
      return v.stringValue ?? null;
    case 'numberValue':
      return v.numberValue ?? null;
    case 'boolValue':
      return v.boolValue ?? null;
    default:
      return null;
  }
}

export const hex = (b: Buffer): string => b.toString('hex');
