import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

// The dashboard is served by the API at /dashboard/ under a CSP without 'unsafe-inline': no inline
// scripts or styles may be emitted (no modulepreload polyfill; CSS as a file; no inlined assets).
export default defineConfig({
  root: here,
  base: '/dashboard/',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
