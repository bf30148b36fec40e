/**
 * @module router — hash routes (`#/memories/<id>`): the server serves one page and every view
 * is addressable, bookmarkable and works with back/forward. Never carries the key.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Location {
  /** Path segments after `#/`, decoded. */
  readonly parts: readonly string[];
  readonly query: URLSearchParams;
}

function current(): Location {
  const hash = window.location.hash.replace(/^#\/?/, '');
  const [path = '', qs = ''] = hash.split('?', 2);
  return {
    parts: path.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(qs),
  };
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const on = (): void => setLoc(current());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return loc;
}

/** The href of a view: `href('memories', id)` → `#/memories/<id>`. */
export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

export function navigate(to: string): void {
  window.location.hash = to.replace(/^#/, '');
}

/** The href of a view with a query: values that are undefined or '' are left out. */
export function hrefQuery(
  parts: readonly string[],
  query: Readonly<Record<string, string | undefined>>,
): string {
  const qs = new URLSearchParams(
    Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  ).toString();
  return `${href(...parts)}${qs === '' ? '' : `?${qs}`}`;
}

/**
 * Changes the current view's query (filters, sort, page): `undefined` or '' removes a key. It
 * replaces the history entry, so back leaves the view instead of stepping through each filter.
 */
export function setQuery(loc: Location, patch: Readonly<Record<string, string | undefined>>): void {
  const next = Object.fromEntries(loc.query);
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined || v === '') delete next[k];
    else next[k] = v;
  }
  window.location.replace(hrefQuery(loc.parts, next));
}
