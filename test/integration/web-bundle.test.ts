/**
 * The built dashboard (dist/web, from `npm run build`) is self-contained and within its budget:
 * no file refers to another origin (it must work offline), and its JavaScript is at most 150 KB
 * gzipped (issue 53; about 33 KB since the graph is drawn without a library).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const WEB_DIR = join(import.meta.dirname, '..', '..', 'dist', 'web');
const BUDGET = 150 * 1024;

describe('built dashboard', () => {
  it('is built by npm run build', () => {
    expect(
      existsSync(join(WEB_DIR, 'index.html')),
      `${WEB_DIR}/index.html (run npm run build)`,
    ).toBe(true);
  });

  it('loads nothing from another origin', () => {
    const html = readFileSync(join(WEB_DIR, 'index.html'), 'utf8');
    expect(html).not.toMatch(/(src|href)=["'](https?:)?\/\//);
    for (const file of readdirSync(join(WEB_DIR, 'assets')).filter((f) => f.endsWith('.css'))) {
      expect(readFileSync(join(WEB_DIR, 'assets', file), 'utf8')).not.toMatch(
        /url\((["']?)(https?:)?\/\//,
      );
    }
  });

  it('ships at most 150 KB of gzipped JavaScript', () => {
    const js = readdirSync(join(WEB_DIR, 'assets')).filter((f) => f.endsWith('.js'));
    expect(js.length).toBeGreaterThan(0);
    const gzipped = js.reduce(
      (sum, f) => sum + gzipSync(readFileSync(join(WEB_DIR, 'assets', f)), { level: 9 }).length,
      0,
    );
    expect(gzipped).toBeLessThanOrEqual(BUDGET);
  });
});
