/** @type {import('jest').Config} */
// Transpile only (types are checked once by `npm run typecheck`); allowJs so ESM-only packages
// such as jose can be turned into CommonJS for Jest's module system.
const tsJest = [
  'ts-jest',
  { tsconfig: { allowJs: true, isolatedModules: true, sourceMap: true }, diagnostics: false },
];

const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)s$': tsJest },
  // jose and content-disposition (2.x, which @fastify/static >= 10.1.4 uses) ship ESM only; Jest's module
  // system needs them transformed to CommonJS.
  transformIgnorePatterns: ['/node_modules/(?!(jose|content-disposition)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};

module.exports = {
  testTimeout: 60_000,
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
