/**
 * Vite build of the dashboard: `npm run build` writes it to dist/web, which the server serves at
 * `/`. Everything is bundled (no CDN); JSX compiles to Preact through Vite's own transform (Oxc).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/**
 * Writes x.br and x.gz beside each text file of the build, at the highest levels, so the server
 * sends them as they are instead of compressing at start-up or on a request.
 */
function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'flashbulb-precompress',
    apply: 'build',
    configResolved: (config) => {
      outDir = config.build.outDir;
    },
    closeBundle: () => {
      for (const file of files(outDir)) {
        const raw = readFileSync(file);
        if (!/\.(js|css|html|svg|json)$/.test(file) || raw.length <= 512) continue;
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(raw, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: 11,
              [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
            },
          }),
        );
        writeFileSync(`${file}.gz`, gzipSync(raw, { level: 9 }));
      }
    },
  };
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // Cytoscape is most of the bundle; it loads only when the graph page opens.
    chunkSizeWarningLimit: 600,
    // Rolldown warns, with a table of plugin timings, when plugins take much of the build: here
    // that is precompress() at the highest levels on purpose (seconds once, never per request).
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  plugins: [precompress()],
  server: { proxy: { '/v1': 'http://127.0.0.1:6381' } },
});
