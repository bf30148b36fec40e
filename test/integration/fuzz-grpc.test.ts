/**
 * Property-based fuzzing of the gRPC surface (issue 12, defect 7), time-boxed: arbitrary bytes
 * and mutated valid messages sent to every unary method. Whatever arrives, the answer comes
 * within the deadline and is never INTERNAL or UNKNOWN (client garbage is INVALID_ARGUMENT);
 * a sentinel workspace nobody fuzzes keeps what it held.
 */
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadHebbs } from '../../src/grpc/server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { grpcMetadata } from '../helpers/grpc.ts';

const DEADLINE_MS = 10_000;

let t: TestApp;
let client: grpc.Client;
let fuzzKey: string;
let sentinelKey: string;
let sentinelBefore: string;

/** Every unary method as `/package.Service/Method`, with a serializer for a valid request. */
const methods: Array<{ path: string; encode: (value: object) => Buffer }> = [];

beforeAll(async () => {
  t = await startTestApp();
  fuzzKey = (await t.req('POST', '/v1/workspaces', { body: { slug: `gfuzz-${process.pid}` } })).body
    .api_key;
  sentinelKey = (
    await t.req('POST', '/v1/workspaces', { body: { slug: `gsentinel-${process.pid}` } })
  ).body.api_key;
  for (let i = 0; i < 3; i++)
    await t.req('POST', '/v1/memories', { key: sentinelKey, body: { content: `sentinel ${i}` } });
  sentinelBefore = await sentinel();
  const pkg = loadHebbs();
  for (const name of ['MemoryService', 'ReflectService', 'HealthService', 'SubscribeService']) {
    const service = (pkg[name] as grpc.ServiceClientConstructor).service;
    for (const def of Object.values(service)) {
      if (def.requestStream || def.responseStream) continue;
      methods.push({ path: def.path, encode: (v) => def.requestSerialize(v) });
    }
  }
  client = new grpc.Client(`127.0.0.1:${t.app.grpcPort}`, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client.close();
  await t.stop();
});

async function sentinel(): Promise<string> {
  const res = await t.req('GET', '/v1/memories?limit=100', { key: sentinelKey });
  return JSON.stringify(
    res.body.memories.map((m: { memory_id: string; content: string }) => [m.memory_id, m.content]),
  );
}

function call(path: string, bytes: Buffer): Promise<grpc.status> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      grpcMetadata({ key: fuzzKey }),
      { deadline: Date.now() + DEADLINE_MS },
      (err) => resolve(err ? err.code : grpc.status.OK),
    );
  });
}

/** A valid message with some of its bytes overwritten, truncated or extended. */
const mutated = fc
  .record({
    content: fc.string({ maxLength: 30 }),
    cue: fc.string({ maxLength: 30 }),
    entity_id: fc.string({ maxLength: 10 }),
    tenant_id: fc.constantFrom('', '../default', 'x'),
    memory_id: fc.uint8Array({ minLength: 0, maxLength: 20 }).map((b) => Buffer.from(b)),
  })
  .chain((msg) =>
    fc.tuple(
      fc.constant(msg),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
      fc.option(fc.nat(), { nil: undefined }),
    ),
  );

it('every unary method answers garbage within the deadline, never INTERNAL or UNKNOWN', async () => {
  expect(methods.length).toBeGreaterThan(10);
  const seen = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: methods.length - 1 }),
      fc.oneof(
        fc.uint8Array({ maxLength: 64 }).map((b) => ({ raw: Buffer.from(b) })),
        mutated.map((m) => ({ mutated: m })),
      ),
      async (i, input) => {
        const m = methods[i] as (typeof methods)[number];
        let bytes: Buffer;
        if ('raw' in input) bytes = input.raw;
        else {
          const [msg, edits, cut] = input.mutated;
          bytes = Buffer.from(m.encode(msg));
          for (const [at, value] of edits) if (bytes.length > 0) bytes[at % bytes.length] = value;
          if (cut !== undefined && bytes.length > 0) bytes = bytes.subarray(0, cut % bytes.length);
        }
        const status = await call(m.path, bytes);
        seen.set(grpc.status[status], (seen.get(grpc.status[status]) ?? 0) + 1);
        expect(
          [grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED],
          `${m.path} ${bytes.toString('hex')} → ${grpc.status[status]}`,
        ).not.toContain(status);
      },
    ),
    { numRuns: 1500, interruptAfterTimeLimit: 20_000 },
  );
  expect(seen.get('INVALID_ARGUMENT') ?? 0).toBeGreaterThan(0);
  expect(seen.get('OK') ?? 0).toBeGreaterThan(0);
  expect(await sentinel()).toBe(sentinelBefore);
}, 90_000);
