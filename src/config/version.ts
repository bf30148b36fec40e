/**
 * @module config/version — the package's version, read once from the package.json above src/
 * (or dist/): the server reports it, the CLI prints it.
 */
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    return (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        version: string;
      }
    ).version;
  } catch {
    return '0.0.0';
  }
}

export const VERSION = readVersion();
