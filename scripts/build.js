#!/usr/bin/env node
// Compiles src/ to dist/. With --if-stale it compiles only when a source or build setting is newer
// than the last build, so `npm run cli` on a built checkout starts in well under a second instead of
// paying for tsc on every call (docs/benchmarks.md, "CLI start-up"). tsc's own diagnostics go to
// stderr: stdout belongs to the command that runs after it (the CLI's JSON).
'use strict';
const { spawnSync } = require('node:child_process');
const { closeSync, existsSync, openSync, readdirSync, statSync, utimesSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stamp = join(root, 'dist', '.build-stamp');
const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

function newestMtime(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  // A directory's own mtime changes when a file is added, renamed or removed.
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function stale() {
  const built = statSync(stamp, { throwIfNoEntry: false });
  if (!built) return true;
  return inputs.some((input) => newestMtime(join(root, input)) > built.mtimeMs);
}

const ifStale = process.argv.includes('--if-stale');
if (ifStale && !stale()) process.exit(0);

// Stamped with the time the build started: a file saved during the build makes the next run build again.
const started = new Date();
const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: ['ignore', process.stderr, process.stderr],
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
if (!existsSync(join(root, 'dist'))) process.exit(1);
closeSync(openSync(stamp, 'w'));
utimesSync(stamp, started, started);
