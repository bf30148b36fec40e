/** @module theme — light or dark: the system's choice until the user picks one (kept in localStorage). */
export type Theme = 'light' | 'dark';
const ITEM = 'flashbulb.theme';

export function initialTheme(): Theme {
  const saved = localStorage.getItem(ITEM);
  if (saved === 'light' || saved === 'dark') return saved;
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme(theme: Theme, remember: boolean): void {
  document.documentElement.dataset['theme'] = theme;
  if (remember) localStorage.setItem(ITEM, theme);
}
