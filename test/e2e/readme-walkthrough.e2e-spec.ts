import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { closedPort } from '../support/downstream';
import { startEntryPoint } from '../support/entry-point';
import { embeddedDataDir } from '../support/temp-data-dir';

/**
 * Runs the README's walkthrough block as a newcomer would, against a freshly started service in embedded mode, so
 * the README cannot drift from the product. Each `# {…}` line after a command is a sample of what that command
 * prints: its top-level keys must be what the command printed, and every sample value written out in full (no `…`)
 * must be equal.
 */
const repo = resolve(__dirname, '../..');

function walkthroughBlock(): string {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const start = readme.indexOf('<!-- walkthrough:start -->');
  const end = readme.indexOf('<!-- walkthrough:end -->');
  if (start < 0 || end < start) throw new Error('README.md has no walkthrough markers');
  const section = readme.slice(start, end);
  const open = section.indexOf('```sh\n');
  const close = section.lastIndexOf('```');
  if (open < 0 || close <= open) throw new Error('the walkthrough section has no sh block');
  return section.slice(open + '```sh\n'.length, close);
}

/** A sample line's top-level members: full values where written out, `undefined` where elided with `…`. */
function sampleMembers(sample: string): { members: Map<string, unknown>; open: boolean } {
  const members = new Map<string, unknown>();
  const body = sample.trim();
  if (!body.startsWith('{')) throw new Error(`sample is not an object: ${sample}`);
  const open = body.endsWith('…}');
  // Split the top level at commas outside strings and brackets (one pass, linear).
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let current = '';
  for (let i = 1; i < body.length - 1; i++) {
    const c = body[i];
    if (inString) {
      current += c;
      if (c === '\\') current += body[++i];
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    if (c === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  if (current) parts.push(current);
  for (const part of parts) {
    if (part.trim() === '…') continue;
    const colon = part.indexOf('":');
    const key = JSON.parse(part.slice(0, colon + 1)) as string;
    const raw = part.slice(colon + 2);
    members.set(key, raw.includes('…') ? undefined : JSON.parse(raw));
  }
  return { members, open };
}

/** Runs the block once in `work` and checks each command's output against the README's sample of it. */
async function runBlock(script: string, work: string, env: NodeJS.ProcessEnv, paste: number): Promise<void> {
  // Before each sample line, a marker, so each command's output can be told apart.
  const lines = script.split('\n');
  const samples: string[] = [];
  const instrumented = lines
    .map((line) => {
      const sample = /^# (\{.*)$/.exec(line);
      if (!sample) return line;
      samples.push(sample[1]);
      return `echo; echo "@@sample ${samples.length - 1}"`;
    })
    .join('\n');
  expect(samples.length).toBeGreaterThanOrEqual(5);

  const run = spawn('bash', ['-euo', 'pipefail', '-c', instrumented], {
    cwd: work,
    env,
    // stdin not a socket: Debian's bash reads /etc/bash.bashrc when it thinks it was started by sshd.
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  run.stdout.on('data', (d) => (stdout += d));
  run.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((r) => run.on('exit', r));
  expect({ paste, code, stderr }).toEqual({ paste, code: 0, stderr: '' });

  const segments = stdout.split(/^@@sample \d+$/m);
  expect(segments).toHaveLength(samples.length + 1);
  samples.forEach((sample, i) => {
    const printed = segments[i].trim().split('\n').pop()!;
    const actual = JSON.parse(printed) as Record<string, unknown>;
    const { members, open } = sampleMembers(sample);
    for (const [key, value] of members) {
      expect({ paste, sample: i, key, present: key in actual }).toEqual({ paste, sample: i, key, present: true });
      if (value !== undefined)
        expect({ paste, sample: i, key, value: actual[key] }).toEqual({ paste, sample: i, key, value });
    }
    if (!open)
      expect({ sample: i, keys: Object.keys(actual).sort() }).toEqual({
        sample: i,
        keys: [...members.keys()].sort(),
      });
  });
}

describe('README walkthrough', () => {
  jest.setTimeout(180_000);

  it('runs top to bottom against a started service, twice, and prints what the README shows', async () => {
    const work = embeddedDataDir('vf-readme-');
    const [apiPort, standInPort] = [await closedPort(), await closedPort()];
    const env = { PATH: process.env.PATH!, HOME: work, DATA_DIR: join(work, 'data') };

    // As written in the README, ported to free ports; the CLI runs compiled (npm would resolve the package from cwd).
    const script = walkthroughBlock()
      .replaceAll('127.0.0.1:3000', `127.0.0.1:${apiPort}`)
      .replaceAll('8089', String(standInPort))
      .replaceAll('npm run --silent cli --', `node ${join(repo, 'dist/cli/main.js')}`);
    const terminal1 = readFileSync(join(repo, 'README.md'), 'utf8').match(/FORWARD_INSECURE_HOSTS=(\S+) npm start/);
    expect(terminal1).not.toBeNull();

    const api = startEntryPoint(join(repo, 'dist/main.js'), {
      cwd: work,
      env: {
        ...env,
        PORT: String(apiPort),
        FORWARD_INSECURE_HOSTS: terminal1![1].replace('8089', String(standInPort)),
      },
      ready: /API listening on/,
      timeoutMs: 60_000,
    });
    try {
      await api.started;
      // Pasted twice in a row, as the README says it may be: the same outputs both times.
      for (const paste of [1, 2]) await runBlock(script, work, env, paste);
      // It leaves the key file the dashboard signs in with and the embedded database, nothing else.
      expect(readdirSync(work).sort()).toEqual(['data', 'default.pem']);
    } finally {
      if (api.child.exitCode === null) {
        api.child.kill('SIGTERM');
        await api.exited;
      }
      rmSync(work, { recursive: true, force: true });
    }
  });
});
