/** @type {import('jest').Config} */
// The fault tests (`npm run test:faults`): PostgreSQL and Redis cut, frozen, killed or failed over, and workers and
// API processes killed, under load. The faults' own lengths add up to minutes, so they stay out of `npm test` and
// run as a step of their own in CI (.ci/run), with the e2e project's setup (database, queue name, build).
const base = require('./jest.config.js');
const e2e = base.projects.find((project) => project.displayName === 'e2e');

module.exports = {
  ...base,
  projects: [{ ...e2e, displayName: 'faults', testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'] }],
};
