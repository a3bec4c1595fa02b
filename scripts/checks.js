#!/usr/bin/env node
// `npm test`'s static checks: every command of the `lint` and `typecheck` scripts (package.json, their one
// definition), run side by side, as many at once as the machine has cores. One after another they take the sum
// of their times; the type-aware ESLint run alone is about half of it. Each command's output is printed whole
// when it ends, so two never interleave; the exit code is 1 if any failed, after all have ended.
'use strict';
const { spawn } = require('node:child_process');
const { availableParallelism } = require('node:os');
const { delimiter, join } = require('node:path');

const root = join(__dirname, '..');
const { scripts } = require(join(root, 'package.json'));

// The lint commands first: ESLint is the longest, and a long one started last would end last.
const commands = ['lint', 'typecheck'].flatMap((name) => scripts[name].split('&&').map((command) => command.trim()));

function run(command) {
  return new Promise((resolve) => {
    const started = Date.now();
    const output = [];
    // Through a shell with the local tools first on the PATH, as npm runs a script.
    const env = { ...process.env, PATH: [join(root, 'node_modules', '.bin'), process.env.PATH].join(delimiter) };
    const child = spawn(command, { cwd: root, env, shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('close', (code, signal) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const failed = code !== 0;
      const text = Buffer.concat(output).toString();
      process.stdout.write(`${failed ? 'FAILED' : 'ok'}  ${command}  (${seconds} s)\n${text}`);
      if (signal) process.stdout.write(`(killed by ${signal})\n`);
      resolve(!failed);
    });
  });
}

async function main() {
  const queue = [...commands];
  const results = [];
  const lane = async () => {
    for (let command = queue.shift(); command !== undefined; command = queue.shift()) results.push(await run(command));
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), commands.length) }, lane));
  if (results.includes(false)) process.exitCode = 1;
}

void main();
