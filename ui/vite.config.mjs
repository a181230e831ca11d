// Builds the web UI into dist/web, served by gatelog itself (src/http/routes/ui.ts). Relative asset URLs
// (base './') so that it works under any path prefix, behind a reverse proxy too.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // No inline scripts or styles: the Content-Security-Policy allows only files from gatelog itself.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  logLevel: 'warn',
});
