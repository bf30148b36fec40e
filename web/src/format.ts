/** @module format — how times, numbers and ids look on the pages. */

/** Microseconds since the epoch → local date and time. */
export function when(us: number): string {
  return new Date(us / 1000).toLocaleString(undefined, {
    dateStyle: 'medium',
    timeStyle: 'medium',
  });
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

/** How long ago (µs since the epoch): "just now", "5 min ago", "3 h ago", "2 d ago", else the date. */
export function ago(us: number, now = Date.now()): string {
  const s = (now - us / 1000) / 1000;
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  if (s < 30 * 86_400) return `${Math.round(s / 86_400)} d ago`;
  return new Date(us / 1000).toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** A count with its noun: `plural(1, 'memory', 'memories')` → "1 memory". */
export function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

/** Local midnight of a `yyyy-mm-dd` date (µs), or null for an empty or bad one. */
export function dayStartUs(date: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return null;
  return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])).getTime() * 1000;
}

/** The local `yyyy-mm-dd` of a time (µs). */
export function dayOf(us: number): string {
  const d = new Date(us / 1000);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}
