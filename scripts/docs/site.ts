/**
 * The documentation site: every page named in docs/site.json, plus README.md and the other
 * Markdown files of the repository they link to, rendered with markdown-it into one static,
 * offline site (no script, no font, nothing from a CDN). Headings get GitHub's anchors
 * (github-slugger), so a link that works on GitHub works here and the other way round. Every link is
 * checked twice: in the Markdown (the file exists in the repository, the anchor is a heading of the
 * target) and then in the built HTML (the href names a file of the site and an id in it). A page missing
 * from the navigation, raw HTML in the prose (`<slug>` written outside backticks, which GitHub and
 * browsers both swallow) and a link outside the repository are reported too.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';

/** docs/site.json: the site's title and its navigation, in sections of pages (paths under docs/). */
export interface SiteConfig {
  title: string;
  nav: { title: string; pages: string[] }[];
}

export interface BuildResult {
  /** Markdown pages rendered (docs pages, README and the repository files they link to). */
  pages: number;
  /** Other repository files copied because a page links to them. */
  files: number;
  /** Links checked (Markdown and HTML together). */
  links: number;
  /** Every problem found; an empty list means the site is whole. */
  problems: string[];
}

interface Page {
  /** Repository-relative path, with `/` (`docs/concepts/memories.md`, `README.md`). */
  source: string;
  title: string;
  html: string;
  anchors: Set<string>;
  links: { href: string; line: number }[];
}

/** Raw HTML that may appear in the Markdown (a comment, or these tags). */
const ALLOWED_HTML = /^<!--|^<\/?(br|kbd|sub|sup|details|summary)\b/i;
const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;
/** A linked directory is copied into the site with a listing; a larger one is a mistake. */
const MAX_DIRECTORY_FILES = 100;

/** Builds the site from the repository at `root` into `out` (emptied first). */
export function buildSite(root: string, out: string): BuildResult {
  const config = JSON.parse(readFileSync(join(root, 'docs/site.json'), 'utf8')) as SiteConfig;
  const problems: string[] = [];
  const md = new MarkdownIt({ html: true, linkify: false, typographer: false });
  const pages = new Map<string, Page>();
  const files = new Set<string>();
  const navPages = config.nav.flatMap((s) => s.pages.map((p) => `docs/${p}`));
  for (const p of navPages)
    if (!existsSync(join(root, p)))
      problems.push(`docs/site.json names ${p}, which does not exist`);
  if (!navPages.includes('docs/index.md'))
    problems.push("docs/site.json's navigation has no index.md, the site's home page");
  for (const p of listMarkdown(join(root, 'docs')).map((f) => `docs/${f}`)) {
    if (!navPages.includes(p))
      problems.push(`${p} is in no section of docs/site.json's navigation`);
  }
  // Render the navigation's pages and README, then every repository Markdown file they link to.
  const queue = [...navPages.filter((p) => existsSync(join(root, p))), 'README.md'];
  while (queue.length > 0) {
    const source = queue.shift() ?? '';
    if (pages.has(source)) continue;
    const page = render(md, root, source, problems);
    pages.set(source, page);
    for (const { href, line } of page.links) {
      const target = resolveLink(source, href);
      if (target === null || target.path === '') continue;
      const where = `${source}:${line}`;
      if (target.path.startsWith('../') || target.path === '..') {
        problems.push(`${where}: ${href} points outside the repository`);
        continue;
      }
      const abs = join(root, target.path);
      if (!existsSync(abs)) {
        problems.push(`${where}: ${href}: no such file ${target.path}`);
        continue;
      }
      if (target.path.endsWith('.md')) queue.push(target.path);
      else if (
        statSync(abs).isDirectory() &&
        readdirSync(abs, { recursive: true }).length > MAX_DIRECTORY_FILES
      )
        problems.push(
          `${where}: ${href}: a directory of more than ${MAX_DIRECTORY_FILES} files; link to a file in it`,
        );
      else files.add(target.path);
    }
  }
  // Check anchors now that every target page is rendered.
  let links = 0;
  for (const page of pages.values()) {
    for (const { href, line } of page.links) {
      links += 1;
      const target = resolveLink(page.source, href);
      if (target === null || target.fragment === '') continue;
      const dest = target.path === '' ? page : pages.get(target.path);
      if (dest === undefined) {
        if (existsSync(join(root, target.path)))
          problems.push(
            `${page.source}:${line}: ${href}: an anchor into a file that is not a Markdown page`,
          );
        continue;
      }
      if (!dest.anchors.has(decodeURIComponent(target.fragment))) {
        problems.push(
          `${page.source}:${line}: ${href}: ${dest.source} has no heading #${target.fragment}${suggest(target.fragment, dest.anchors)}`,
        );
      }
    }
  }
  // Write the site.
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const written = new Map<string, string>();
  for (const page of pages.values()) {
    const at = sitePath(page.source);
    const html = layout(config, page, at, pages, rewriteLinks(page, at));
    mkdirSync(dirname(join(out, at)), { recursive: true });
    writeFileSync(join(out, at), html);
    written.set(at, html);
  }
  for (const f of files) {
    const abs = join(root, f);
    if (statSync(abs).isDirectory()) {
      const at = `${sitePath(f)}/index.html`;
      const entries = readdirSync(abs, { recursive: true, withFileTypes: true }).filter((e) =>
        e.isFile(),
      );
      const items = entries.map((e) =>
        posix.join(relative(abs, join(e.parentPath, e.name)).split(sep).join('/')),
      );
      for (const item of items) {
        mkdirSync(dirname(join(out, sitePath(f), item)), { recursive: true });
        copyFileSync(join(abs, item), join(out, sitePath(f), item));
      }
      const body = `<h1><code>${escapeHtml(f)}</code></h1><ul>${items.map((i) => `<li><a href="${escapeHtml(i)}">${escapeHtml(i)}</a></li>`).join('')}</ul>`;
      const html = layout(
        config,
        { source: f, title: f, html: '', anchors: new Set(), links: [] },
        at,
        pages,
        body,
      );
      mkdirSync(dirname(join(out, at)), { recursive: true });
      writeFileSync(join(out, at), html);
      written.set(at, html);
    } else {
      mkdirSync(dirname(join(out, sitePath(f))), { recursive: true });
      copyFileSync(abs, join(out, sitePath(f)));
    }
  }
  // The built HTML is checked once the Markdown is whole (a broken Markdown link breaks its HTML too).
  if (problems.length === 0) links += checkHtml(out, written, problems);
  return { pages: pages.size, files: files.size, links, problems };
}

/** Where a repository file lands in the site: docs/x/y.md → x/y.html, README.md → readme.html, others under repo/. */
export function sitePath(source: string): string {
  if (source === 'README.md') return 'readme.html';
  const html = source.endsWith('.md') ? `${source.slice(0, -3)}.html` : source;
  return source.startsWith('docs/') ? html.slice('docs/'.length) : `repo/${html}`;
}

/** A link's target: repository path (empty for the same page) and fragment; null for an external link. */
function resolveLink(from: string, href: string): { path: string; fragment: string } | null {
  if (EXTERNAL.test(href) || href.startsWith('//')) return null;
  const hash = href.indexOf('#');
  const path = hash < 0 ? href : href.slice(0, hash);
  const fragment = hash < 0 ? '' : href.slice(hash + 1);
  if (path === '') return { path: '', fragment };
  const joined = posix.normalize(posix.join(posix.dirname(from), decodeURIComponent(path)));
  return { path: joined.replace(/\/$/, ''), fragment };
}

function render(md: MarkdownIt, root: string, source: string, problems: string[]): Page {
  const text = readFileSync(join(root, source), 'utf8');
  const env = {};
  const tokens = md.parse(text, env);
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const links: Page['links'] = [];
  let title = source;
  let line = 1;
  tokens.forEach((t, i) => {
    if (t.map !== null) line = t.map[0] + 1;
    if (t.type === 'heading_open') {
      const inline = tokens[i + 1];
      const label = plainText(inline?.children ?? []);
      const id = slugger.slug(label);
      t.attrSet('id', id);
      anchors.add(id);
      if (t.tag === 'h1' && title === source) title = label;
    }
    if (t.type === 'html_block' && !ALLOWED_HTML.test(t.content.trim()))
      problems.push(
        `${source}:${line}: raw HTML ${JSON.stringify(t.content.trim().slice(0, 40))}: write it in backticks`,
      );
    for (const c of t.children ?? []) {
      if (c.type === 'link_open') links.push({ href: c.attrGet('href') ?? '', line });
      if (c.type === 'image') links.push({ href: c.attrGet('src') ?? '', line });
      if (c.type === 'html_inline' && !ALLOWED_HTML.test(c.content))
        problems.push(
          `${source}:${line}: raw HTML ${JSON.stringify(c.content)} in the text: write it in backticks`,
        );
    }
  });
  return { source, title, html: md.renderer.render(tokens, md.options, env), anchors, links };
}

/** A heading's text as GitHub slugs it: the text of its inline tokens, code spans included. */
function plainText(children: Token[]): string {
  return children
    .map((c) =>
      c.type === 'text' || c.type === 'code_inline' ? c.content : c.type === 'softbreak' ? ' ' : '',
    )
    .join('');
}

/** The page's HTML with every repository link pointed at its place in the site. */
function rewriteLinks(page: Page, at: string): string {
  return page.html.replace(/(<a href=|<img src=)"([^"]*)"/g, (whole, attr: string, raw: string) => {
    const href = unescapeHtml(raw);
    const target = resolveLink(page.source, href);
    if (target === null || target.path === '') return whole;
    let dest = sitePath(target.path);
    if (
      !target.path.endsWith('.md') &&
      !/\.[a-z0-9]+$/i.test(target.path) &&
      href.replace(/#.*/, '').endsWith('/')
    )
      dest = `${dest}/index.html`;
    const rel = posix.relative(posix.dirname(at), dest) || posix.basename(dest);
    return `${attr}"${escapeHtml(rel + (target.fragment !== '' ? `#${target.fragment}` : ''))}"`;
  });
}

/** Checks every href and src of the written pages: a file of the site, and an id in it. */
function checkHtml(out: string, written: Map<string, string>, problems: string[]): number {
  const ids = new Map<string, Set<string>>();
  const idsOf = (at: string): Set<string> => {
    let set = ids.get(at);
    if (set === undefined) {
      set = new Set(
        [...(written.get(at) ?? '').matchAll(/\sid="([^"]+)"/g)].map((m) =>
          unescapeHtml(m[1] ?? ''),
        ),
      );
      ids.set(at, set);
    }
    return set;
  };
  let n = 0;
  for (const [at, html] of written) {
    for (const m of html.matchAll(/\s(?:href|src)="([^"]*)"/g)) {
      const href = unescapeHtml(m[1] ?? '');
      if (EXTERNAL.test(href) || href.startsWith('//')) continue;
      n += 1;
      const hash = href.indexOf('#');
      const path = hash < 0 ? href : href.slice(0, hash);
      const fragment = hash < 0 ? '' : decodeURIComponent(href.slice(hash + 1));
      const dest = path === '' ? at : posix.normalize(posix.join(posix.dirname(at), path));
      if (dest.startsWith('../') || !existsSync(resolve(out, dest))) {
        problems.push(`site ${at}: ${href} names no file of the site`);
        continue;
      }
      if (fragment !== '' && dest.endsWith('.html') && !idsOf(dest).has(fragment))
        problems.push(`site ${at}: ${href}: no id "${fragment}" in ${dest}`);
    }
  }
  return n;
}

function layout(
  config: SiteConfig,
  page: Page,
  at: string,
  pages: Map<string, Page>,
  body: string,
): string {
  const rel = (target: string): string =>
    posix.relative(posix.dirname(at), target) || posix.basename(target);
  const nav = config.nav
    .map(
      (s) =>
        `<p>${escapeHtml(s.title)}</p><ul>${s.pages
          .map((p) => {
            const target = sitePath(`docs/${p}`);
            const title = pages.get(`docs/${p}`)?.title ?? p;
            return `<li${target === at ? ' class="here"' : ''}><a href="${escapeHtml(rel(target))}">${escapeHtml(title)}</a></li>`;
          })
          .join('')}</ul>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)} · ${escapeHtml(config.title)}</title>
<style>${STYLE}</style></head>
<body><nav><a class="home" href="${escapeHtml(rel('index.html'))}">${escapeHtml(config.title)}</a>${nav}<p><a href="${escapeHtml(rel('readme.html'))}">README</a></p></nav>
<main>${body}</main></body></html>
`;
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1d1f23;--bg:#fff;--muted:#5b6270;--line:#d8dbe0;--code:#f3f4f6;--link:#0b57d0}
@media (prefers-color-scheme:dark){:root{--fg:#e3e5e8;--bg:#16181c;--muted:#9aa1ad;--line:#33373e;--code:#22252b;--link:#8ab4f8}}
*{box-sizing:border-box}body{margin:0;display:flex;font:16px/1.55 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
nav{width:16rem;flex:none;padding:1rem;border-right:1px solid var(--line);height:100vh;position:sticky;top:0;overflow:auto;font-size:.92rem}
nav p{margin:1rem 0 .25rem;color:var(--muted);font-weight:600}nav ul{list-style:none;margin:0;padding:0}nav li.here a{font-weight:600}
nav .home{font-weight:700;font-size:1.1rem}a{color:var(--link)}
main{flex:1;min-width:0;max-width:62rem;padding:1rem 2.5rem 4rem}
pre{background:var(--code);padding:.75rem 1rem;overflow:auto;border-radius:6px}code{background:var(--code);padding:.1em .3em;border-radius:4px;font-size:.9em}
pre code{padding:0;background:none}table{border-collapse:collapse;display:block;overflow:auto;margin:1rem 0}
th,td{border:1px solid var(--line);padding:.3rem .6rem;text-align:left;vertical-align:top}th{background:var(--code)}
h1,h2,h3{line-height:1.25}h2{border-bottom:1px solid var(--line);padding-bottom:.2rem;margin-top:2rem}
@media (max-width:50rem){body{display:block}nav{width:auto;height:auto;position:static;border:0;border-bottom:1px solid var(--line)}main{padding:1rem}}
`;

function listMarkdown(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name.startsWith('.')) return [];
    if (e.isDirectory()) return listMarkdown(join(dir, e.name), `${prefix}${e.name}/`);
    return e.name.endsWith('.md') ? [`${prefix}${e.name}`] : [];
  });
}

function suggest(fragment: string, anchors: Set<string>): string {
  const near = [...anchors]
    .filter((a) => a.includes(fragment.split('-')[0] ?? '') && a !== fragment)
    .slice(0, 3);
  return near.length > 0 ? ` (it has ${near.map((a) => `#${a}`).join(', ')})` : '';
}

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}
function unescapeHtml(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
