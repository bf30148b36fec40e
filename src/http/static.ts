/**
 * @module http/static — serves the built web dashboard (`npm run build` writes it to dist/web) at
 * `/` on the REST port. The files are read once at start-up with their content types and ETags,
 * and with the brotli and gzip forms the build wrote beside them (`x.js.br`, `x.js.gz`); a file
 * without them is compressed on its first request and kept. It claims only GET/HEAD for `/` and
 * for files that exist in the site; every other request goes to the API, which keeps its routes.
 * `staticSiteOf` serves a list of files (or texts) under paths of their own, the same way (the API
 * reference at /docs, http/api-docs).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { HttpRequest, HttpResponse } from './exchange.ts';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/** Text types worth compressing; images and fonts already are. */
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.svg', '.txt', '.map']);

/**
 * The dashboard talks only to its own origin: no CDN, no inline script, no framing. Styles may be
 * inline because the graph library sets element styles.
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

type Encoding = 'br' | 'gzip';

interface Asset {
  type: string;
  etag: string;
  /** Vite names assets by content hash: those may be cached for a year; the rest are revalidated. */
  immutable: boolean;
  raw: Buffer;
  /** Whether compressing is worth it (text, over 512 bytes). */
  compressible: boolean;
  encoded: Partial<Record<Encoding, Buffer>>;
}

export interface StaticSite {
  /** Files served (URL paths). */
  readonly paths: readonly string[];
  /** The reply for a dashboard request, or null when the request is the API's. */
  serve(req: Pick<HttpRequest, 'method' | 'path' | 'headers'>): HttpResponse | null;
}

/** One file of a listed site: its URL path, and a file to read or a text (typed by `ext`). */
export type SiteFile = { path: string; file: string } | { path: string; text: string; ext: string };

/** A site of the files listed, each read (or encoded) once, when this is called. */
export function staticSiteOf(files: readonly SiteFile[]): StaticSite {
  const assets = new Map<string, Asset>(
    files.map((f) => [f.path, 'file' in f ? load(f.file) : asset(Buffer.from(f.text), f.ext)]),
  );
  return { paths: [...assets.keys()], serve: (req) => serve(assets, req) };
}

/** Loads the site in `dir`; an absent directory gives a site that serves nothing. */
export function openStaticSite(dir: string): StaticSite {
  const assets = new Map<string, Asset>();
  if (existsSync(dir)) {
    for (const file of walk(dir)) {
      // x.js.br and x.js.gz are x.js's compressed forms, not files of their own.
      if (/\.(br|gz)$/.test(file) && existsSync(file.slice(0, -3).replace(/\.$/, ''))) continue;
      assets.set(`/${relative(dir, file).split(sep).join('/')}`, load(file));
    }
  }
  return {
    paths: [...assets.keys()],
    serve: (req) => serve(assets, req),
  };
}

function serve(
  assets: ReadonlyMap<string, Asset>,
  req: Pick<HttpRequest, 'method' | 'path' | 'headers'>,
): HttpResponse | null {
  if (req.method !== 'GET' && req.method !== 'HEAD') return null;
  const asset = assets.get(req.path === '/' ? '/index.html' : req.path);
  if (!asset) return null;
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    'content-type': asset.type,
    etag: asset.etag,
    'cache-control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    vary: 'Accept-Encoding',
  };
  if (matchesEtag(req.headers.get('if-none-match'), asset.etag))
    return { status: 304, headers, body: '' };
  const [encoding, body] = pickEncoding(asset, req.headers.get('accept-encoding') ?? '');
  if (encoding !== null) headers['content-encoding'] = encoding;
  return { status: 200, headers, body: req.method === 'HEAD' ? '' : body };
}

function pickEncoding(asset: Asset, accept: string): [Encoding | null, Buffer] {
  if (!asset.compressible) return [null, asset.raw];
  const accepted = new Set<string>();
  for (const part of accept.toLowerCase().split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    if (name && !(q !== undefined && Number(q.slice(2)) === 0)) accepted.add(name);
  }
  const encoding: Encoding | null = accepted.has('br')
    ? 'br'
    : accepted.has('gzip')
      ? 'gzip'
      : null;
  if (encoding === null) return [null, asset.raw];
  // Not pre-compressed by the build: compress once, at a level fast enough for a request.
  asset.encoded[encoding] ??=
    encoding === 'br'
      ? brotliCompressSync(asset.raw, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: 5,
            [constants.BROTLI_PARAM_SIZE_HINT]: asset.raw.length,
          },
        })
      : gzipSync(asset.raw, { level: 6 });
  return [encoding, asset.encoded[encoding]];
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return (
    header.trim() === '*' ||
    header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
  );
}

function load(file: string): Asset {
  const a = asset(readFileSync(file), extname(file).toLowerCase());
  if (existsSync(`${file}.br`)) a.encoded.br = readFileSync(`${file}.br`);
  if (existsSync(`${file}.gz`)) a.encoded.gzip = readFileSync(`${file}.gz`);
  a.immutable = /[-.][A-Za-z0-9_-]{8,}\.\w+$/.test(file) && file.includes(`${sep}assets${sep}`);
  return a;
}

function asset(raw: Buffer, ext: string): Asset {
  return {
    type: TYPES[ext] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(raw).digest('base64url').slice(0, 22)}"`,
    immutable: false,
    raw,
    compressible: COMPRESSIBLE.has(ext) && raw.length > 512,
    encoded: {},
  };
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}
