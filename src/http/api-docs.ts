/**
 * @module http/api-docs — the API reference at /docs: Swagger UI (the swagger-ui-dist package,
 * installed with the server and served from it: no CDN, nothing fetched from elsewhere) rendering
 * the server's own /v1/openapi.json, with "Try it out" and an Authorize button for the bearer key
 * (kept in the page's memory, not stored). Like the document, it is public: it describes the API
 * and holds no data. Its files are read on the first request for /docs, so a server nobody reads
 * the reference of pays nothing for it; /docs redirects to /docs/ so the page's relative links
 * (and the document's, ../v1/openapi.json) work behind a proxy's path prefix too.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { HttpRequest, HttpResponse } from './exchange.ts';
import { staticSiteOf, type StaticSite } from './static.ts';

const PREFIX = '/docs';

/** The page: the bundle, its style sheet and the script that starts it (a file: the CSP allows no inline script). */
const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flashbulb API reference</title>
<link rel="icon" type="image/png" href="favicon-32x32.png">
<link rel="stylesheet" href="swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="swagger-ui-bundle.js"></script>
<script src="start.js"></script>
</body>
</html>
`;

/** validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io for a badge. */
const START_JS = `window.ui = SwaggerUIBundle({
  url: new URL('../v1/openapi.json', document.baseURI).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  filter: true,
  displayRequestDuration: true,
  persistAuthorization: false,
});
`;

export interface ApiDocs {
  /** The reply for a request under /docs, or null when the request is not the reference's. */
  serve(req: Pick<HttpRequest, 'method' | 'path' | 'headers'>): HttpResponse | null;
}

export function apiDocs(): ApiDocs {
  let site: StaticSite | null = null;
  return {
    serve: (req) => {
      if (req.path !== PREFIX && !req.path.startsWith(`${PREFIX}/`)) return null;
      if (req.method !== 'GET' && req.method !== 'HEAD') return null;
      if (req.path === PREFIX)
        return {
          status: 301,
          headers: { location: `${PREFIX}/`, 'content-type': 'text/plain; charset=utf-8' },
          body: '',
        };
      site ??= openSite();
      return site.serve(req);
    },
  };
}

function openSite(): StaticSite {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return staticSiteOf([
    { path: `${PREFIX}/`, text: INDEX_HTML, ext: '.html' },
    { path: `${PREFIX}/start.js`, text: START_JS, ext: '.js' },
    { path: `${PREFIX}/swagger-ui-bundle.js`, file: join(dist, 'swagger-ui-bundle.js') },
    { path: `${PREFIX}/swagger-ui.css`, file: join(dist, 'swagger-ui.css') },
    { path: `${PREFIX}/favicon-32x32.png`, file: join(dist, 'favicon-32x32.png') },
  ]);
}
