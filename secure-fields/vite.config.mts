import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

// The Secure Fields frames are served at the root of SECURE_FIELDS_ORIGIN under a CSP without 'unsafe-inline'
// (docs/decisions/0141): no inline script or style may be emitted (no modulepreload polyfill, CSS as files, no
// inlined assets); assets hashed, so they can be cached for long.
export default defineConfig({
  root: here,
  base: '/',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('../dist/secure-fields', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
    rollupOptions: {
      input: {
        controller: fileURLToPath(new URL('controller.html', import.meta.url)),
        input: fileURLToPath(new URL('input.html', import.meta.url)),
      },
    },
  },
});
