/**
 * The documentation: the site builds from docs/ (and README.md, and the repository files they link
 * to) with every link, anchor and navigation entry whole; the API reference page is what the route
 * table makes today; the README stays a short front page without issue numbers. The builder itself
 * is shown to catch what it must, on a small repository made here.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { renderApiReference, type OpenApiDocument } from '../../scripts/docs/api-reference.ts';
import { buildSite, sitePath } from '../../scripts/docs/site.ts';
import { VERSION } from '../../src/app.ts';
import { openApiDocument } from '../../src/http/openapi.ts';
import { ROUTES } from '../../src/http/routes.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const temp: string[] = [];
afterAll(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'flashbulb-docs-'));
  temp.push(d);
  return d;
}

describe('the documentation site', () => {
  it('builds with no broken link, anchor or navigation entry', () => {
    const out = tempDir();
    const result = buildSite(ROOT, out);
    expect(result.problems).toEqual([]);
    expect(result.pages).toBeGreaterThan(25);
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('<nav>');
    // Nothing comes from outside: no script, no stylesheet or font from another host.
    const html = readFileSync(join(out, sitePath('docs/quickstart.md')), 'utf8');
    expect(html).not.toMatch(
      /<script|<link[^>]+stylesheet|@import|https?:\/\/[^"]*\.(css|js|woff2?)/,
    );
  });

  it('docs/api/reference.md is generated from the OpenAPI document the server serves', () => {
    const stored = readFileSync(join(ROOT, 'docs/api/reference.md'), 'utf8');
    const made = renderApiReference(openApiDocument(ROUTES, VERSION) as unknown as OpenApiDocument);
    expect(
      stored === made,
      'stale: run `npm run client:generate` and commit docs/api/reference.md',
    ).toBe(true);
    for (const route of ROUTES.filter((r) => !r.path.startsWith('/v1/workspaces/{workspace}/'))) {
      expect(stored).toContain(
        `### \`${route.method} ${route.path.replace(/:([a-z_]+)/g, '{$1}')}\``,
      );
    }
  });

  it('README.md is a short front page: at most 400 lines, no issue numbers', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(400);
    expect(readme).not.toMatch(/\bissues? \d+/i);
  });

  it('every configuration variable and every metric is documented', () => {
    const config = readFileSync(join(ROOT, 'docs/operations/configuration.md'), 'utf8');
    const variables = new Set(
      readFileSync(join(ROOT, 'src/config/index.ts'), 'utf8').match(/\bFLASHBULB_[A-Z0-9_]+\b/g),
    );
    expect(
      [...variables].filter((v) => !config.includes(`\`${v}\``)),
      'not in docs/operations/configuration.md',
    ).toEqual([]);
    const observability = readFileSync(join(ROOT, 'docs/operations/observability.md'), 'utf8');
    const metrics = [
      ...readFileSync(join(ROOT, 'src/metrics/index.ts'), 'utf8').matchAll(
        /name: '(flashbulb_[a-z_]+)'/g,
      ),
    ].map((m) => m[1] ?? '');
    expect(metrics.length).toBeGreaterThan(20);
    expect(
      metrics.filter((m) => !observability.includes(`\`${m}\``)),
      'not in docs/operations/observability.md',
    ).toEqual([]);
  });

  it("every route the pages' shell examples call is a route the server serves", () => {
    const config = JSON.parse(readFileSync(join(ROOT, 'docs/site.json'), 'utf8')) as {
      nav: { pages: string[] }[];
    };
    const files = ['README.md', ...config.nav.flatMap((s) => s.pages).map((p) => `docs/${p}`)];
    const calls = files.flatMap((f) =>
      shellCalls(readFileSync(join(ROOT, f), 'utf8')).map((c) => ({ ...c, f })),
    );
    expect(calls.length).toBeGreaterThan(60);
    const unknown = calls
      .filter((c) => !served(c.method, c.path))
      .map((c) => `${c.f}: ${c.method} ${c.path}`);
    expect(unknown).toEqual([]);
  });

  it('every repository file the pages name in code (`test/…/x.test.ts`) exists', () => {
    const config = JSON.parse(readFileSync(join(ROOT, 'docs/site.json'), 'utf8')) as {
      nav: { pages: string[] }[];
    };
    const missing: string[] = [];
    for (const f of ['README.md', ...config.nav.flatMap((s) => s.pages).map((p) => `docs/${p}`)]) {
      for (const m of readFileSync(join(ROOT, f), 'utf8').matchAll(
        /`((?:src|test|native-bench|scripts|clients|deploy|web|examples|proto|docs|\.ci)\/[^`\s]*)`/g,
      )) {
        const path = (m[1] ?? '').replace(/[.,:;)]+$/, '');
        // Placeholders and globs name no one file; a name without an extension is no file name.
        if (/[*…<>{}$]/.test(path) || !/\.[a-z0-9]+$|\/$/i.test(path)) continue;
        // A client's own paths (`src/generated.ts` on its page) are relative to the client.
        if (
          ![ROOT, join(ROOT, 'clients/typescript'), join(ROOT, 'clients/python')].some((base) =>
            existsSync(join(base, path)),
          )
        )
          missing.push(`${f}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('the pages carry no issue numbers (the history is native-bench/HISTORY.md and the git log)', () => {
    const config = JSON.parse(readFileSync(join(ROOT, 'docs/site.json'), 'utf8')) as {
      nav: { pages: string[] }[];
    };
    const pages = config.nav.flatMap((s) => s.pages).filter((p) => p !== 'architecture-notes.md');
    for (const p of pages)
      expect(readFileSync(join(ROOT, 'docs', p), 'utf8'), p).not.toMatch(/\bissues? \d+/i);
  });
});

describe('the site builder', () => {
  /** A repository of these files, built; the problems it reports. */
  function problems(files: Record<string, string>, nav: string[]): string[] {
    const root = tempDir();
    const base = {
      'docs/site.json': JSON.stringify({
        title: 'T',
        nav: [{ title: 'S', pages: ['index.md', ...nav] }],
      }),
      'docs/index.md': '# Home\n',
      'README.md': '# R\n',
    };
    for (const [path, text] of Object.entries({ ...base, ...files })) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return buildSite(root, join(root, 'out')).problems;
  }

  it('accepts good links: pages, GitHub anchors, repository files, README', () => {
    expect(
      problems(
        {
          'docs/a.md':
            '# A\n\n## Use it from…\n\n### `POST /v1/recall`\n\nSee [b](b.md#some-heading), [here](#use-it-from), [that](#post-v1recall), [code](../src/x.ts), [readme](../README.md).\n',
          'docs/b.md': '# B\n\n## Some heading\n',
          'src/x.ts': 'export {};\n',
        },
        ['a.md', 'b.md'],
      ),
    ).toEqual([]);
  });

  it('reports a missing file, a missing anchor, an orphan page, a missing nav entry and raw HTML', () => {
    const found = problems(
      {
        'docs/a.md':
          '# A\n\n[gone](gone.md), [no anchor](b.md#nowhere), [self](#nothing), [out](../../x.md).\n\nThe route /v1/<slug>/x.\n',
        'docs/b.md': '# B\n\n## Somewhere\n',
        'docs/orphan.md': '# O\n',
      },
      ['a.md', 'b.md', 'missing.md'],
    );
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/docs\/a\.md:3: gone\.md: no such file docs\/gone\.md/),
        expect.stringMatching(/docs\/a\.md:3: b\.md#nowhere: docs\/b\.md has no heading #nowhere/),
        expect.stringMatching(/docs\/a\.md:3: #nothing: docs\/a\.md has no heading #nothing/),
        expect.stringMatching(/\.\.\/\.\.\/x\.md points outside the repository/),
        expect.stringMatching(/docs\/orphan\.md is in no section/),
        expect.stringMatching(/names docs\/missing\.md, which does not exist/),
        expect.stringMatching(/docs\/a\.md:5: raw HTML "<slug>"/),
      ]),
    );
  });

  it('checks the README too', () => {
    expect(
      problems({ 'README.md': '# R\n\n[docs](docs/a.md#missing)\n', 'docs/a.md': '# A\n' }, [
        'a.md',
      ]),
    ).toEqual(['README.md:3: docs/a.md#missing: docs/a.md has no heading #missing']);
  });
});

/** The calls of the `sh` blocks: `$B/v1/…` (or a localhost URL) with the method curl sends. */
function shellCalls(markdown: string): { method: string; path: string }[] {
  const blocks = [...markdown.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)].map(
    (m) => m[1] ?? '',
  );
  // A command continued with a trailing backslash is one line.
  // Several commands on a line (`fb …/keys ; fb -X DELETE …`) are several commands.
  const lines = blocks
    .flatMap((b) => b.replace(/\\\n\s*/g, ' ').split('\n'))
    .flatMap((l) => l.replace(/\s#\s.*$/, '').split(/;\s*(?=fb |curl )/));
  const out: { method: string; path: string }[] = [];
  for (const line of lines) {
    for (const m of line.matchAll(/(?:\$B|https?:\/\/localhost:\d+)(\/v1\/[^\s"'?;]*)/g)) {
      const explicit = /-X\s+([A-Z]+)/.exec(line)?.[1];
      const method = explicit ?? (/\s(-d|--data-binary|-F)\s/.test(line) ? 'POST' : 'GET');
      out.push({ method, path: (m[1] ?? '').replace(/\/$/, '') });
    }
  }
  return out;
}

/** Whether a route (or its workspace-scoped form) answers this method on this path. */
function served(method: string, path: string): boolean {
  const matches = (routePath: string, p: string): boolean => {
    const r = routePath.split('/');
    const d = p.split('/');
    return r.length === d.length && r.every((seg, i) => seg.startsWith(':') || seg === d[i]);
  };
  const methods = method === 'HEAD' ? ['GET'] : [method];
  if (ROUTES.some((r) => methods.includes(r.method) && matches(r.path, path))) return true;
  const scoped = /^\/v1\/workspaces\/[^/]+(\/.+)$/.exec(path)?.[1];
  return (
    scoped !== undefined &&
    ROUTES.some(
      (r) =>
        r.scoped &&
        methods.includes(r.method) &&
        matches(r.path, `/v1${scoped.replace(/^\/v1/, '')}`),
    )
  );
}
