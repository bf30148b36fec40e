/**
 * The TypeScript client's generated types (clients/typescript/src/generated.ts, from our own small
 * generator) agree with what the ecosystem's generator, openapi-typescript, makes of the same
 * OpenAPI document: for every operation, our body, query and JSON reply types and openapi-typescript's
 * are assignable to each other, checked by the TypeScript compiler. docs/architecture-notes.md says why the
 * client keeps its generator (named methods) while this test holds it to openapi-typescript's reading.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import { operations } from '../../clients/typescript/scripts/generate.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = `${ROOT}test-artifacts/openapi-typescript/`;

/**
 * Where the two readings differ on purpose. An empty `properties: {}` reply is an open object in
 * our documents (replies may gain fields); openapi-typescript reads it as `Record<string, never>`.
 */
const DIFFER: Record<string, string> = {
  FeedResponse: 'an open empty object: ours Record<string, unknown>, theirs Record<string, never>',
  CloseSubscriptionResponse:
    'an open empty object: ours Record<string, unknown>, theirs Record<string, never>',
};

interface Op {
  id: string;
  method: string;
  path: string;
  body?: unknown;
  query: unknown[];
  response?: unknown;
  responseKind: string;
}

function pascal(id: string): string {
  return id.replace(/(^|_)([a-z0-9])/g, (_m, _s, c: string) => c.toUpperCase());
}

/** One `Same<ours, theirs>` line per type an operation has. */
function checks(ops: Op[]): string[] {
  return ops.flatMap((op) => {
    const P = pascal(op.id);
    const at = `paths['${op.path}']['${op.method.toLowerCase()}']`;
    const pairs: Array<[string, string]> = [];
    if (op.body) pairs.push([`${P}Body`, `JsonBody<${at}>`]);
    if (op.query.length > 0) pairs.push([`${P}Query`, `NonNullable<${at}['parameters']['query']>`]);
    if (op.response && op.responseKind === 'json') pairs.push([`${P}Response`, `JsonOk<${at}>`]);
    return pairs
      .filter(([name]) => !(name in DIFFER))
      .map(([name, theirs]) => `  Same<G.${name}, ${theirs}, '${name}'>,`);
  });
}

function checkModule(lines: string[]): string {
  return `import type { paths } from './schema.ts';
import type * as G from '../../clients/typescript/src/generated.ts';
type JsonBody<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type JsonOk<O> = O extends { responses: infer R } ? { [S in keyof R]: S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer J } } ? J : never) : never }[keyof R] : never;
type Same<A, B, N extends string> = [A] extends [B] ? ([B] extends [A] ? true : \`\${N}: openapi-typescript's type is not assignable to ours\`) : \`\${N}: ours is not assignable to openapi-typescript's\`;
export const checks: [
${lines.join('\n')}
] = [${lines.map(() => 'true').join(', ')}];
`;
}

function compile(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: [],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('the generated client types', () => {
  it("agree with openapi-typescript's reading of the same document, operation by operation", async () => {
    const doc = JSON.parse(
      readFileSync(`${ROOT}clients/typescript/openapi.json`, 'utf8'),
    ) as object;
    mkdirSync(OUT, { recursive: true });
    writeFileSync(
      `${OUT}schema.ts`,
      astToString(await openapiTS(doc as Parameters<typeof openapiTS>[0])),
    );
    const lines = checks(operations(doc) as Op[]);
    expect(lines.length).toBeGreaterThan(40);
    writeFileSync(`${OUT}check.ts`, checkModule(lines));
    expect(compile(`${OUT}check.ts`)).toEqual([]);
  }, 60_000);
});
