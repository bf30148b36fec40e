#!/usr/bin/env node
/**
 * Generates src/generated.ts from openapi.json: a TypeScript type for every named schema, the
 * body / query / response types of every operation, the table of operations, and a base class
 * with one method per JSON operation. No dependencies: it reads the subset of JSON Schema the
 * server emits (objects, arrays, unions, literals, records, primitives, $refs).
 *
 *   node scripts/generate.mjs [openapi.json] [src/generated.ts]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REF = '#/components/schemas/';
/** Operations the generated class leaves out: they are written by hand (streams, multipart) or are not REST. */
const HAND_WRITTEN = new Set(['subscribe', 'upload', 'mcp', 'mcp_v1']);

/** @param {unknown} schema @param {string} indent @returns {string} */
export function typeOf(schema, indent = '') {
  if (schema === true || schema === undefined || schema === null) return 'unknown';
  if (typeof schema !== 'object') return 'unknown';
  const s = /** @type {Record<string, any>} */ (schema);
  if (typeof s.$ref === 'string')
    return s.$ref.startsWith(REF) ? s.$ref.slice(REF.length) : 'unknown';
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  // An object's anyOf / allOf / not beside its properties are constraints (which fields are needed
  // together or apart), not other shapes: the type is the object's.
  if (s.type === 'object' && s.properties) return objectType(s, indent);
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf))
    return union((s.anyOf ?? s.oneOf).map((x) => typeOf(x, indent)));
  if (Array.isArray(s.allOf)) return s.allOf.map((x) => paren(typeOf(x, indent))).join(' & ');
  if (Array.isArray(s.type)) return union(s.type.map((type) => typeOf({ ...s, type }, indent)));
  switch (s.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${typeOf(s.items, indent)}>`;
    case 'object':
      return objectType(s, indent);
    default:
      return s.properties ? objectType(s, indent) : 'unknown';
  }
}

function objectType(s, indent) {
  const props = Object.entries(s.properties ?? {});
  const extra = s.patternProperties
    ? Object.values(s.patternProperties)[0]
    : typeof s.additionalProperties === 'object'
      ? s.additionalProperties
      : undefined;
  if (props.length === 0)
    return extra === undefined
      ? 'Record<string, unknown>'
      : `Record<string, ${typeOf(extra, indent)}>`;
  const required = new Set(s.required ?? []);
  const inner = `${indent}  `;
  const lines = props.map(([name, prop]) => {
    const doc =
      prop && typeof prop === 'object' && prop.description
        ? `${inner}/** ${String(prop.description).replaceAll('*/', '*\\/')} */\n`
        : '';
    return `${doc}${inner}${safeKey(name)}${required.has(name) ? '' : '?'}: ${typeOf(prop, inner)};`;
  });
  return `{\n${lines.join('\n')}\n${indent}}`;
}

function union(types) {
  const unique = [...new Set(types)];
  return unique.length === 1 ? unique[0] : unique.map(paren).join(' | ');
}

function paren(t) {
  return / [|&] /.test(t) && !t.startsWith('{') ? `(${t})` : t;
}

function safeKey(name) {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

function pascal(id) {
  return id.replace(/(^|_)([a-z0-9])/g, (_, __, c) => c.toUpperCase());
}

function camel(id) {
  const p = pascal(id);
  return p[0].toLowerCase() + p.slice(1);
}

/** Every operation of the document, with what the client needs to call it. */
export function operations(doc) {
  const out = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'delete', 'patch']) {
      const op = item[method];
      if (!op || op.operationId.endsWith('_in_workspace')) continue;
      const scoped = Boolean(
        doc.paths[path.replace(/^\/v1\//, '/v1/workspaces/{workspace}/')]?.[method],
      );
      const successStatus = Object.keys(op.responses).find((s) => s.startsWith('2'));
      const success = op.responses[successStatus];
      const content = success.content ?? {};
      const json = content['application/json'];
      const text = Object.keys(content).find(
        (c) => c.startsWith('text/') && c !== 'text/event-stream',
      );
      out.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        scoped,
        summary: op.summary ?? '',
        deprecated: op.deprecated === true,
        params: (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        query: (op.parameters ?? []).filter((p) => p.in === 'query'),
        body: op.requestBody?.content?.['application/json']?.schema,
        bodyRequired: op.requestBody?.required === true,
        response: json ? json.schema : text ? { type: 'string' } : undefined,
        responseKind: json ? 'json' : text ? 'text' : 'none',
        events: content['text/event-stream']?.['x-sse-events'],
      });
    }
  }
  return out;
}

export function generate(doc) {
  const out = [
    '/* eslint-disable */',
    `// GENERATED by scripts/generate.mjs from openapi.json (Flashbulb ${doc.info.version}). Do not edit:`,
    '// run `npm run client:generate` in the repository root after changing a route or schema.',
    '',
  ];
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    if (schema.description) out.push(`/** ${schema.description} */`);
    out.push(`export type ${name} = ${typeOf(schema)};`, '');
  }
  out.push(`export type ErrorCode = ErrorBody['error_code'];`, '');
  const ops = operations(doc);
  for (const op of ops) {
    const P = pascal(op.id);
    if (op.body) out.push(`export type ${P}Body = ${typeOf(op.body)};`);
    if (op.query.length > 0) {
      const schema = {
        type: 'object',
        properties: Object.fromEntries(op.query.map((q) => [q.name, q.schema])),
        required: op.query.filter((q) => q.required).map((q) => q.name),
      };
      out.push(`export type ${P}Query = ${typeOf(schema)};`);
    }
    if (op.response) out.push(`export type ${P}Response = ${typeOf(op.response)};`);
    if (op.events) {
      for (const [event, schema] of Object.entries(op.events))
        out.push(`export type ${P}${pascal(event)}Event = ${typeOf(schema)};`);
    }
    out.push('');
  }
  out.push(
    '/** How each operation is called: method, path (with `{param}`s), whether a workspace prefix applies, what it answers. */',
  );
  out.push('export const OPERATIONS = {');
  for (const op of ops) {
    out.push(
      `  ${op.id}: { method: '${op.method}', path: '${op.path}', scoped: ${op.scoped}, response: '${op.responseKind}' },`,
    );
  }
  out.push('} as const;', '', 'export type OperationId = keyof typeof OPERATIONS;', '');
  out.push(
    'export interface CallArgs {',
    '  params?: Record<string, string>;',
    '  query?: object | undefined;',
    '  body?: unknown;',
    '}',
    '',
  );
  out.push('/** One method per JSON operation; subclasses provide `call`. */');
  out.push('export abstract class GeneratedClient<Options> {');
  out.push(
    '  protected abstract call<T>(op: OperationId, args: CallArgs, options?: Options): Promise<T>;',
  );
  for (const op of ops.filter((o) => !HAND_WRITTEN.has(o.id))) {
    const P = pascal(op.id);
    const args = op.params.map((p) => `${camel(p)}: string`);
    const callArgs = [];
    if (op.params.length > 0)
      callArgs.push(`params: { ${op.params.map((p) => `${safeKey(p)}: ${camel(p)}`).join(', ')} }`);
    if (op.body) {
      args.push(`body${op.bodyRequired ? '' : '?'}: ${P}Body`);
      callArgs.push('body');
    }
    if (op.query.length > 0) {
      args.push(`query${op.query.some((q) => q.required) ? '' : '?'}: ${P}Query`);
      callArgs.push('query');
    }
    args.push('options?: Options');
    const result = op.response ? `${P}Response` : 'void';
    out.push(
      '',
      `  /** ${op.summary.replaceAll('*/', '*\\/')} (\`${op.method} ${op.path}\`)${op.deprecated ? '\n   * @deprecated' : ''} */`,
    );
    out.push(`  ${camel(op.id)}(${args.join(', ')}): Promise<${result}> {`);
    out.push(`    return this.call<${result}>('${op.id}', { ${callArgs.join(', ')} }, options);`);
    out.push('  }');
  }
  out.push('}', '');
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const here = new URL('..', import.meta.url);
  const input = process.argv[2] ?? fileURLToPath(new URL('openapi.json', here));
  const output = process.argv[3] ?? fileURLToPath(new URL('src/generated.ts', here));
  writeFileSync(output, generate(JSON.parse(readFileSync(input, 'utf8'))));
  process.stderr.write(`wrote ${output}\n`);
}
