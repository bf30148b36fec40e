/**
 * Builds the documentation site into dist/docs (or the directory given) and exits 1, listing every
 * broken link, anchor or navigation entry, when the site is not whole. `npm run docs:build`;
 * test/unit/docs-site.test.ts runs the same build.
 */
import { resolve } from 'node:path';
import { buildSite } from './docs/site.ts';

const root = resolve(new URL('..', import.meta.url).pathname);
const out = resolve(process.argv[2] ?? `${root}/dist/docs`);
const started = performance.now();
const result = buildSite(root, out);
const ms = Math.round(performance.now() - started);
for (const p of result.problems) process.stderr.write(`${p}\n`);
process.stderr.write(
  `docs: ${result.pages} pages, ${result.files} linked files, ${result.links} links checked in ${ms} ms → ${out}${result.problems.length > 0 ? `; ${result.problems.length} problems` : ''}\n`,
);
process.exit(result.problems.length > 0 ? 1 : 0);
