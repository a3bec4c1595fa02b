/** @type {import('jest').Config} */
// Transpile only (types are checked once by `npm run typecheck`).
const tsJest = ['ts-jest', { tsconfig: { isolatedModules: true, sourceMap: true }, diagnostics: false }];

const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': tsJest },
  // Packages that ship ES modules only (NestJS 12, jose, content-disposition) are loaded as ES modules, not
  // transformed: Jest runs with --experimental-vm-modules (the `jest` npm script) and requires them as Node does.
  transformIgnorePatterns: ['/node_modules/'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};

module.exports = {
  testTimeout: 60_000,
  // Each file's duration, slowest first, after Jest's own summary (CI logs show which files grow slow).
  reporters: ['default', '<rootDir>/test/support/durations-reporter.js'],
  // On two cores Jest would run every file in its main process, one after another, and the ES-module
  // registry it builds per file (--experimental-vm-modules) is never freed: the heap passed 3.7 GB and the
  // run died of it (CI, stop 29). With a limit Jest runs the files in a worker instead, still one at a
  // time here, and replaces the worker when a file leaves it above the limit.
  workerIdleMemoryLimit: '1GB',
  // Fails the run if a test wrote into the checkout (data/, *.pem) instead of a temporary directory.
  globalSetup: '<rootDir>/test/support/checkout-guard-setup.ts',
  globalTeardown: '<rootDir>/test/support/checkout-guard-teardown.ts',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
