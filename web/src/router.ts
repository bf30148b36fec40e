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
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(qs) };
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
