/**
 * The TypeScript client's checked-in OpenAPI document and generated types are current: they are
 * what `npm run client:generate` makes from today's route table. A route or schema changed
 * without regenerating fails here (and so in CI).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/app.ts';
import { openApiDocument } from '../../src/http/openapi.ts';
import { ROUTES } from '../../src/http/routes.ts';
import { mcpToolsModule } from '../../scripts/write-mcp-tools.ts';

const CLIENT = fileURLToPath(new URL('../../clients/typescript/', import.meta.url));
const STALE = 'stale: run `npm run client:generate` and commit the result';

describe('clients/typescript generated files', () => {
  it('openapi.json is the document the server serves', () => {
    const stored = JSON.parse(readFileSync(join(CLIENT, 'openapi.json'), 'utf8'));
    expect(stored, STALE).toEqual(JSON.parse(JSON.stringify(openApiDocument(ROUTES, VERSION))));
  });

  it('src/generated.ts is what the generator makes from openapi.json', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashbulb-client-'));
    try {
      const out = join(dir, 'generated.ts');
      execFileSync(
        process.execPath,
        [join(CLIENT, 'scripts/generate.mjs'), join(CLIENT, 'openapi.json'), out],
        { stdio: 'pipe' },
      );
      expect(
        readFileSync(join(CLIENT, 'src/generated.ts'), 'utf8') === readFileSync(out, 'utf8'),
        STALE,
      ).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('src/mcp-tools.ts is the MCP tool list the server serves (the AI SDK tools read it)', () => {
    expect(readFileSync(join(CLIENT, 'src/mcp-tools.ts'), 'utf8') === mcpToolsModule(), STALE).toBe(
      true,
    );
  });
});
