/** @module format — how times, numbers and ids look on the pages. */

/** Microseconds since the epoch → local date and time. */
export function when(us: number): string {
  return new Date(us / 1000).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function num(x: number, digits = 3): string {
  return Number.isFinite(x) ? x.toFixed(digits) : '–';
}

export function shortId(id: string): string {
  return `${id.slice(0, 8)}…`;
}

export function clip(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
