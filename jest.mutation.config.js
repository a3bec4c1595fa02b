/**
 * The Jest setup of `npm run test:mutation` (stryker.config.json): the unit tests plus the e2e files
 * that exercise the mutated modules in-process. One database per Stryker worker is created and
 * migrated once and reused by every mutant run, and no build is made: the full global setup (a
 * fresh database and a `tsc` per run) would cost more than the tests themselves for each of
 * hundreds of mutants.
 * MUTATION_E2E=a,b (names of test/e2e/*.e2e-spec.ts without the suffix) runs those e2e files instead
 * of the default ones, so a run scoped to one file group (`--mutate`) runs only the files covering
 * it; MUTATION_E2E=none (or MUTATION_UNIT_ONLY=1) leaves the e2e files out: a mutant then costs
 * about a second instead of about ten (each e2e run boots the API). docs/benchmarks.md ("Mutation
 * testing") lists the groups and their files.
 */
const base = require('./jest.config.js');

const [unit, e2e] = base.projects;

// Every e2e file that covers a module of stryker.config.json's `mutate`: the whole list is hours of
// mutants at about ten seconds each, so runs name their group's files (docs/benchmarks.md).
// checkout-sessions starts the compiled worker (dist/worker.js, never mutated): `npm run build` first;
// stryker.config.json copies dist/ into the sandbox for it.
const DEFAULT_E2E = [
  'auth',
  'forward-access',
  'idempotency',
  'idempotency-purge',
  'idempotency-streamed',
  'merchant-isolation',
  'forward-activity',
  'forward-callbacks',
  'webhook-secrets',
  'webhook-signer',
  'checkout-sessions',
  'forward-authentication-methods',
];
const selected = process.env.MUTATION_UNIT_ONLY
  ? []
  : (process.env.MUTATION_E2E?.split(',').map((name) => name.trim()) ?? DEFAULT_E2E).filter(
      (name) => name && name !== 'none',
    );
// MUTATION_UNIT=a,b narrows the unit project the same way (default: every unit test).
const units = process.env.MUTATION_UNIT?.split(',').map((name) => `<rootDir>/test/unit/${name.trim()}.spec.ts`);
// Checks of the source tree, not of behaviour: in Stryker's sandbox every file carries an added
// `// @ts-nocheck` line (a folder near its size limit goes over it) and dist/ is the copy made before
// the run, so they would fail the initial run without telling anything about a mutant.
const TREE_CHECKS = ['/test/unit/code-size\\.spec\\.ts$', '/test/unit/openapi-document\\.spec\\.ts$'];

module.exports = {
  testTimeout: base.testTimeout,
  projects: [
    ...(process.env.MUTATION_UNIT === 'none'
      ? []
      : [
          {
            ...unit,
            ...(units ? { testMatch: units } : {}),
            testPathIgnorePatterns: ['/node_modules/', ...TREE_CHECKS],
          },
        ]),
    ...(selected.length === 0
      ? []
      : [
          {
            ...e2e,
            testMatch: selected.map((name) => `<rootDir>/test/e2e/${name}.e2e-spec.ts`),
            globalSetup: '<rootDir>/test/support/mutation-global-setup.ts',
            globalTeardown: undefined,
          },
        ]),
  ],
};
