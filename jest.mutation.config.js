/**
 * The Jest setup of `npm run test:mutation` (stryker.config.json): the unit tests plus the e2e files
 * that exercise the mutated modules in-process (authentication; the forward route's access rules).
 * One database per Stryker worker is created and migrated once and reused by every mutant run, and
 * no build is made: the full global setup (a fresh database and a `tsc` per run) would cost more
 * than the tests themselves for each of hundreds of mutants.
 * MUTATION_UNIT_ONLY=1 leaves the e2e files out: a mutant then costs about a second instead of about
 * ten (each e2e run boots the API), at the price of the auth modules, which only e2e tests exercise.
 */
const base = require('./jest.config.js');

// Stryker's instrumented code runs about ten times slower: the placeholder timing tests get a budget
// that still fails a quadratic scanner (see test/unit/placeholders-linear.spec.ts).
process.env.PLACEHOLDER_TIME_BUDGET_MS ??= '5000';
const [unit, e2e] = base.projects;

module.exports = {
  testTimeout: base.testTimeout,
  projects: [
    unit,
    ...(process.env.MUTATION_UNIT_ONLY ? [] : [{
      ...e2e,
      testMatch: ['<rootDir>/test/e2e/auth.e2e-spec.ts', '<rootDir>/test/e2e/forward-access.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/mutation-global-setup.ts',
      globalTeardown: undefined,
    }]),
  ],
};
