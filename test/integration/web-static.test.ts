/**
 * The dashboard's static files on the REST port: content types, compression, cache headers,
 * ETag revalidation, and the API's own routes left as they were.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gzipSync, gunzipSync } from 'node:zlib';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;

/** A raw GET (fetch would decode the body and hide content-encoding handling). */
function get(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('static dashboard files', () => {
  let t: TestApp;
  let site: string;

  beforeAll(async () => {
    site = mkdtempSync(join(tmpdir(), 'flashbulb-web-'));
    mkdirSync(join(site, 'assets'));
    writeFileSync(
      join(site, 'index.html'),
      '<!doctype html><title>Flashbulb</title><script type="module" src="/assets/index-AbCdEf12.js"></script>',
    );
    writeFileSync(join(site, 'assets', 'index-AbCdEf12.js'), SCRIPT);
    writeFileSync(join(site, 'assets', 'index-Zz9Yy8Xx.css'), 'body{color:red}');
    writeFileSync(join(site, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    // Compressed forms written by the build (marked, to tell them from ones made by the server).
    writeFileSync(join(site, 'assets', 'chunk-Qq1Ww2Ee.js'), SCRIPT);
    writeFileSync(
      join(site, 'assets', 'chunk-Qq1Ww2Ee.js.br'),
      brotliCompressSync(`// br from the build\n${SCRIPT}`),
    );
    writeFileSync(
      join(site, 'assets', 'chunk-Qq1Ww2Ee.js.gz'),
      gzipSync(`// gz from the build\n${SCRIPT}`),
    );
    writeFileSync(join(site, 'notes.txt.gz'), 'a file of its own');
    t = await startTestApp({ webDir: site });
  });

  afterAll(async () => {
    await t.stop();
    rmSync(site, { recursive: true, force: true });
  });

  it('serves index.html at / without a key, revalidated on each visit', async () => {
    const res = await get(t.base, '/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['etag']).toMatch(/^"[\w-]+"$/);
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body.toString()).toContain('<title>Flashbulb</title>');
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await get(t.base, '/index.html');
    const again = await get(t.base, '/index.html', {
      'if-none-match': String(first.headers['etag']),
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it('serves hashed assets as immutable, compressed as the client accepts', async () => {
    const br = await get(t.base, '/assets/index-AbCdEf12.js', {
      'accept-encoding': 'gzip, deflate, br',
    });
    expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers['vary']).toBe('Accept-Encoding');
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).toString()).toBe(SCRIPT);
    const gz = await get(t.base, '/assets/index-AbCdEf12.js', {
      'accept-encoding': 'gzip, br;q=0',
    });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(SCRIPT);
    const plain = await get(t.base, '/assets/index-AbCdEf12.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(SCRIPT);
  });

  it('sends the compressed forms the build wrote, and does not serve them as files', async () => {
    const br = await get(t.base, '/assets/chunk-Qq1Ww2Ee.js', { 'accept-encoding': 'br' });
    expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(brotliDecompressSync(br.body).toString()).toBe(`// br from the build\n${SCRIPT}`);
    const gz = await get(t.base, '/assets/chunk-Qq1Ww2Ee.js', { 'accept-encoding': 'gzip' });
    expect(gunzipSync(gz.body).toString()).toBe(`// gz from the build\n${SCRIPT}`);
    expect((await get(t.base, '/assets/chunk-Qq1Ww2Ee.js.br')).status).toBe(404);
    // A .gz whose base name is not in the site is an ordinary file.
    expect((await get(t.base, '/notes.txt.gz')).body.toString()).toBe('a file of its own');
  });

  it('gives each file its content type', async () => {
    expect((await get(t.base, '/assets/index-Zz9Yy8Xx.css')).headers['content-type']).toBe(
      'text/css; charset=utf-8',
    );
    const svg = await get(t.base, '/favicon.svg');
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(svg.headers['cache-control']).toBe('no-cache');
  });

  it('leaves the API alone: unknown paths, other methods and /v1 routes answer as before', async () => {
    const missing = await t.req('GET', '/assets/nope.js', { key: null });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error_code: 'not_found' });
    expect((await t.req('POST', '/', { key: null })).body).toMatchObject({
      error_code: 'not_found',
    });
    expect((await t.req('GET', '/v1/auth/whoami', { key: null })).status).toBe(401);
    const whoami = await t.req('GET', '/v1/auth/whoami');
    expect(whoami.status).toBe(200);
    expect(whoami.headers.get('content-type')).toBe('application/json');
  });

  it('serves nothing when the site is not built', async () => {
    const bare = await startTestApp({ webDir: join(site, 'absent') });
    try {
      expect((await bare.req('GET', '/', { key: null })).status).toBe(404);
    } finally {
      await bare.stop();
    }
  });
});
