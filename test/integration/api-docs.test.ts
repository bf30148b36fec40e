/**
 * The API reference at /docs: a page and its assets served by the server itself (Swagger UI from
 * the installed swagger-ui-dist, nothing from a CDN), public like the OpenAPI document it renders,
 * under the dashboard's content security policy. The page rendering every operation offline is
 * tested in headless Chromium (test/e2e/api-docs.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('GET /docs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.stop());

  it('redirects /docs to /docs/, whose page loads only its own assets, each served without a key', async () => {
    const bare = await fetch(`${t.base}/docs`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/docs/');

    const page = await t.req('GET', '/docs/', { key: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(
      /default-src 'self'; script-src 'self'/,
    );
    expect(page.text).not.toMatch(/https?:\/\//);
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(refs.sort()).toEqual([
      'favicon-32x32.png',
      'start.js',
      'swagger-ui-bundle.js',
      'swagger-ui.css',
    ]);
    const types: Record<string, RegExp> = {
      '.js': /^text\/javascript/,
      '.css': /^text\/css/,
      '.png': /^image\/png$/,
    };
    for (const ref of refs) {
      const res = await fetch(new URL(ref, `${t.base}/docs/`), {
        headers: { 'accept-encoding': 'br' },
      });
      expect(res.status, ref).toBe(200);
      expect(res.headers.get('content-type'), ref).toMatch(
        types[ref.slice(ref.lastIndexOf('.'))] as RegExp,
      );
      expect((await res.arrayBuffer()).byteLength, ref).toBeGreaterThan(100);
    }
    const start = await t.req('GET', '/docs/start.js', { key: null });
    expect(start.text).toContain("new URL('../v1/openapi.json', document.baseURI)");
    expect(start.text).toContain('validatorUrl: null');
    const doc = await t.req('GET', '/v1/openapi.json', { key: null });
    expect(doc.status).toBe(200);
  });

  it('answers HEAD and revalidation, and leaves other methods and unknown files to the API (a JSON 404)', async () => {
    const head = await fetch(`${t.base}/docs/swagger-ui.css`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const etag = head.headers.get('etag') ?? '';
    expect(
      (await fetch(`${t.base}/docs/swagger-ui.css`, { headers: { 'if-none-match': etag } })).status,
    ).toBe(304);
    const missing = await t.req('GET', '/docs/nothing.js', { key: null });
    expect(missing.status).toBe(404);
    const posted = await t.req('POST', '/docs/', { body: {} });
    expect(posted.status).toBe(404);
    expect(posted.body.error_code).toBe('not_found');
  });
});
