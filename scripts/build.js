#!/usr/bin/env node
// Compiles src/ to dist/, bundles the dashboard into dist/dashboard and the Secure Fields frames into
// dist/secure-fields. With --if-stale each part is rebuilt only when one of its inputs is newer than its
// last build, so `npm run cli` on a built checkout starts in well under a second instead of paying for tsc on every call
// (docs/benchmarks-history.md, "CLI start-up"). Diagnostics go to stderr: stdout belongs to the command that
// runs after it (the CLI's JSON).
'use strict';
const { spawnSync } = require('node:child_process');
const { closeSync, mkdirSync, openSync, readdirSync, statSync, utimesSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');

const parts = [
  {
    name: 'server',
    stamp: join(root, 'dist', '.build-stamp'),
    inputs: ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
    command: [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
    env: process.env,
  },
  {
    name: 'dashboard',
    stamp: join(root, 'dist', '.dashboard-stamp'),
    inputs: ['dashboard', 'package-lock.json'],
    command: [
      join(root, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      join(root, 'dashboard/vite.config.mts'),
      '--logLevel',
      'warn',
    ],
    // Jest (and some shells) set NODE_ENV=test or development, which would make Vite bundle Lit's
    // development build; the served bundle is always the production one.
    env: { ...process.env, NODE_ENV: 'production' },
  },
  {
    // The frames bundle the card-scheme table of src/platform/card-data (one table for the frames and the server).
    name: 'secure-fields',
    stamp: join(root, 'dist', '.secure-fields-stamp'),
    inputs: ['secure-fields', 'src', 'package-lock.json'],
    command: [
      join(root, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      join(root, 'secure-fields/vite.config.mts'),
      '--logLevel',
      'warn',
    ],
    env: { ...process.env, NODE_ENV: 'production' },
  },
];

function newestMtime(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  // A directory's own mtime changes when a file is added, renamed or removed.
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function stale(part) {
  const built = statSync(part.stamp, { throwIfNoEntry: false });
  if (!built) return true;
  return part.inputs.some((input) => newestMtime(join(root, input)) > built.mtimeMs);
}

const ifStale = process.argv.includes('--if-stale');
for (const part of parts) {
  if (ifStale && !stale(part)) continue;
  // Stamped with the time the build started: a file saved during the build makes the next run build again.
  const started = new Date();
  const run = spawnSync(process.execPath, part.command, {
    cwd: root,
    env: part.env,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (run.status !== 0) {
    process.stderr.write(`build: the ${part.name} build failed\n`);
    process.exit(run.status ?? 1);
  }
  mkdirSync(join(root, 'dist'), { recursive: true });
  closeSync(openSync(part.stamp, 'w'));
  utimesSync(part.stamp, started, started);
}
