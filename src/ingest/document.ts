/**
 * @module ingest/document — turns an uploaded text or markdown file into a document body, its
 * entity and its propositions (one per self-contained statement); pure, no I/O. Front matter
 * (`---` … `---` at the top) may set `entity_id: <name>`, otherwise a path `entities/<name>/…`
 * names the entity. Propositions are the body's sentences and list items with markdown syntax
 * removed; a statement under a heading that is only a fragment (fewer than 4 words, or starting
 * lower-case) is prefixed with the heading so it stands on its own; statements under 3 words are
 * dropped.
 */

export interface ParsedDocument {
  body: string;
  entityId: string | null;
  propositions: string[];
}

const MAX_PROPOSITIONS = 500;

export function parseDocument(filePath: string, text: string): ParsedDocument {
  const { frontMatter, body } = splitFrontMatter(text.replace(/\r\n?/g, '\n'));
  const entityId = frontMatter['entity_id'] ?? entityFromPath(filePath);
  return { body: body.trim(), entityId, propositions: propositions(body) };
}

function splitFrontMatter(text: string): { frontMatter: Record<string, string>; body: string } {
  const m = /^---\n([\s\S]*?)\n---\n?/.exec(text);
  if (!m) return { frontMatter: {}, body: text };
  const frontMatter: Record<string, string> = {};
  for (const line of (m[1] ?? '').split('\n')) {
    const kv = /^([A-Za-z_][\w-]*)\s*:\s*(.*)$/.exec(line);
    if (kv?.[1] && kv[2] !== undefined)
      frontMatter[kv[1]] = kv[2].trim().replace(/^["']|["']$/g, '');
  }
  return { frontMatter, body: text.slice(m[0].length) };
}

function entityFromPath(filePath: string): string | null {
  const m = /(?:^|\/)entities\/([^/]+)\//.exec(filePath);
  return m?.[1] ?? null;
}

function propositions(body: string): string[] {
  const out: string[] = [];
  let heading = '';
  let paragraph: string[] = [];
  const flush = (): void => {
    for (const s of sentences(paragraph.join(' '))) add(out, heading, s);
    paragraph = [];
  };
  for (const raw of body.split('\n')) {
    const line = raw.trim();
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (h) {
      flush();
      heading = clean(h[1] ?? '');
    } else if (/^([-*+]|\d+[.)])\s+/.test(line)) {
      flush();
      for (const s of sentences(line.replace(/^([-*+]|\d+[.)])\s+/, ''))) add(out, heading, s);
    } else if (line === '' || /^(```|---|\|)/.test(line)) {
      flush();
    } else {
      paragraph.push(line);
    }
  }
  flush();
  return [...new Set(out)].slice(0, MAX_PROPOSITIONS);
}

function add(out: string[], heading: string, sentence: string): void {
  const s = clean(sentence);
  const words = s.split(/\s+/).filter(Boolean).length;
  if (words < 3 && !(heading && words >= 1)) return;
  const fragment = words < 4 || /^[a-z]/.test(s);
  out.push(heading && fragment ? `${heading}: ${s}` : s);
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+(?=[A-Z0-9"'(])/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function clean(s: string): string {
  return s
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`~]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether `text` mentions the entity (case-insensitive, `-`/`_` read as spaces, whole words). */
export function mentions(text: string, entityId: string): boolean {
  const name = entityId.toLowerCase().replace(/[-_]+/g, ' ').trim();
  if (name.length < 2) return false;
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '[\\s_-]+');
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, 'iu').test(text);
}
