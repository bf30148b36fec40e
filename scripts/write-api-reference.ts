/**
 * Writes docs/api/reference.md, the REST API reference page, from the OpenAPI document the server
 * serves at GET /v1/openapi.json (built from the route table, no server needed). Run by
 * `npm run client:generate`; test/unit/docs-api-reference.test.ts fails when the page is stale.
 */
import { writeFileSync } from 'node:fs';
import { VERSION } from '../src/app.ts';
import { openApiDocument } from '../src/http/openapi.ts';
import { ROUTES } from '../src/http/routes.ts';
import { renderApiReference, type OpenApiDocument } from './docs/api-reference.ts';

const target = new URL('../docs/api/reference.md', import.meta.url);
writeFileSync(
  target,
  renderApiReference(openApiDocument(ROUTES, VERSION) as unknown as OpenApiDocument),
);
process.stderr.write(`wrote ${target.pathname}\n`);
