// Type-aware lint: the rules that catch real defects in a service (floating or misused promises, unsafe `any`,
// unbound methods) rather than style, which Prettier owns (`npm run lint` runs both).
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'dist-bench/**', 'coverage/**', 'reports/**', '.stryker-tmp/**', 'node_modules/**', 'test/artifacts/**', '**/*.js', '**/*.mjs', '**/*.mts', 'test/generated/**'],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `_`-prefixed names are deliberately unused (destructuring a field away, a required parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // Static `from(row)` mappers are passed as callbacks on purpose; they use no `this`.
      '@typescript-eslint/unbound-method': ['error', { ignoreStatic: true }],
      // Prettier wraps code at 120 but never breaks strings, template literals or comments; this catches what it leaves.
      // Split long strings into '…' + '…' (same value) and rewrap comments; only a line holding a URL is exempt.
      'max-len': ['error', { code: 140, ignoreUrls: true }],
    },
  },
  {
    // Tests and benchmark fixtures read JSON answers, which are `any` by nature; their shape is checked by assertions and by the
    // response-schema check against the OpenAPI document, so the unsafe-`any` family would only add casts.
    // Promise rules stay on: a floating promise in a test is a test that cannot fail.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Lit calls a template's event listeners with the element as `this` (lit-html's `host` option).
    files: ['dashboard/src/**/*.ts'],
    rules: { '@typescript-eslint/unbound-method': 'off' },
  },
);
