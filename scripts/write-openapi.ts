/**
 * Writes the OpenAPI document the server serves at GET /v1/openapi.json to
 * clients/typescript/openapi.json, from the route table (no server needed). Run by
 * `npm run client:generate`; test/unit/client-generated.test.ts fails when the file is stale.
 */
import { writeFileSync } from 'node:fs';
import { VERSION } from '../src/app.ts';
import { openApiDocument } from '../src/http/openapi.ts';
import { ROUTES } from '../src/http/routes.ts';

const target = new URL('../clients/typescript/openapi.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(openApiDocument(ROUTES, VERSION), null, 2)}\n`);
process.stderr.write(`wrote ${target.pathname}\n`);
