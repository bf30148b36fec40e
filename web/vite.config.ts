/**
 * Vite build of the dashboard: `npm run build` writes it to dist/web, which the server serves at
 * `/`. Everything is bundled (no CDN); JSX compiles to Preact through Vite's own transform (Oxc).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

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
  },
  server: { proxy: { '/v1': 'http://127.0.0.1:6381' } },
});
