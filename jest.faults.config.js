/** @type {import('jest').Config} */
// The fault tests (`npm run test:faults`): private servers frozen, killed and cut under in-flight jobs for
// minutes, so they stay out of `npm test` and run as a step of their own in CI (.ci/run).
const base = require('./jest.config.js');
const e2e = base.projects.find((project) => project.displayName === 'e2e');

module.exports = {
  ...base,
  projects: [{ ...e2e, displayName: 'faults', testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'] }],
};
