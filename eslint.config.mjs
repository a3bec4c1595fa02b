// Type-aware lint: the rules that catch real defects in a service (floating promises, unsafe any, misused
// promises) rather than style, which Prettier owns.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'dist-bench/**', 'coverage/**', 'reports/**', '.stryker-tmp/**', 'node_modules/**', 'dashboard/dist/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
);
