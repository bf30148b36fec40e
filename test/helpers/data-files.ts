/**
 * @module test/helpers/data-files — every regular file under a live server's data directory with
 * its bytes. Files the server renames or deletes between the listing and the read (snapshot and
 * auth.json temp files) are skipped: they hold nothing any more.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function dataFiles(dir: string): Array<{ path: string; bytes: Buffer }> {
  const out: Array<{ path: string; bytes: Buffer }> = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    try {
      out.push({ path, bytes: readFileSync(path) });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return out;
}
