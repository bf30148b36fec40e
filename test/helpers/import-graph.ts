/**
 * The import graph of the repository's own TypeScript, read with the TypeScript compiler's
 * `preProcessFile` (a syntactic scan: no type-checking, no program). Every `import`, `export … from`
 * and dynamic `import()` counts, type-only ones included: a type import is still an arrow between
 * concepts, and a cycle of types is as hard to cut later as a cycle of values.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';

/** One import statement: `from` imports `spec`, which resolved to `to` (a repo path) for relative ones. */
export interface ImportEdge {
  from: string;
  spec: string;
  to: string | null;
}

export interface SourceFile {
  path: string;
  imports: ImportEdge[];
  readsEnv: boolean;
  lines: number;
  /** Paragraphs (runs of lines between blank ones) of the file's opening `@module` comment; null without one. */
  headerParagraphs: number | null;
}

const ROOT = join(dirname(new URL(import.meta.url).pathname), '..', '..');

function listTs(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listTs(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every `.ts` file under the given folders (repo-relative), with its imports. */
export function readSources(folders: string[]): SourceFile[] {
  return folders
    .flatMap(listTs)
    .sort()
    .map((path) => {
      const text = readFileSync(join(ROOT, path), 'utf8');
      const scan = ts.preProcessFile(text, true, true);
      const imports = scan.importedFiles.map(({ fileName: spec }) => ({
        from: path,
        spec,
        to: spec.startsWith('.') ? normalize(join(dirname(path), spec)) : null,
      }));
      const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
      return {
        path,
        imports,
        readsEnv: /\bprocess\.env\b/.test(stripComments(text)),
        lines,
        headerParagraphs: headerParagraphs(text),
      };
    });
}

function headerParagraphs(text: string): number | null {
  const header = /^(?:#![^\n]*\n)?\s*\/\*\*([\s\S]*?)\*\//.exec(text)?.[1];
  if (header === undefined || !header.includes('@module')) return null;
  const lines = header.split('\n').map((l) => l.replace(/^\s*\*?\s?/, '').trim());
  return lines.filter((l, i) => l !== '' && (i === 0 || lines[i - 1] === '')).length;
}

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

/** Strongly connected components with more than one member (Tarjan), each sorted. */
export function cycles(nodes: string[], next: (node: string) => Iterable<string>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const to of next(node)) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found;
}

/** The shortest way round a cycle through its first member, for the message: `a → b → … → a`. */
export function cyclePath(component: string[], next: (node: string) => Iterable<string>): string {
  const members = new Set(component);
  const start = component[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of next(node)) {
      if (!members.has(to) || cameFrom.has(to)) continue;
      cameFrom.set(to, node);
      if (to === start) return [...walkBack(cameFrom, start), start].join(' → ');
      queue.push(to);
    }
  }
  return component.join(' ⇄ ');
}

function walkBack(cameFrom: Map<string, string>, start: string): string[] {
  const path: string[] = [];
  let node = cameFrom.get(start)!;
  while (node !== start) {
    path.unshift(node);
    node = cameFrom.get(node)!;
  }
  return [start, ...path];
}
