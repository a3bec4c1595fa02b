import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { closedPort } from '../support/downstream';
import { EntryPoint, startEntryPoint } from '../support/entry-point';
import { http } from '../support/http';
import { embeddedDataDir } from '../support/temp-data-dir';
import { waitFor } from '../support/wait';

/**
 * Runs the README's walkthrough block as a newcomer would, against a freshly started service in embedded mode, so
 * the README cannot drift from the product. Each `# {…}` line after a command is a sample of what that command
 * prints: its top-level keys must be what the command printed, and every sample value written out in full (no `…`)
 * must be equal. Port 8089, where the walkthrough's stand-in once listened, is held by a stranger server throughout:
 * it must never be sent anything.
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

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The block with a marker line in place of each sample, and the samples, in order. */
function instrument(script: string): { instrumented: string; samples: string[] } {
  const samples: string[] = [];
  const instrumented = script
    .split('\n')
    .map((line) => {
      const sample = /^# (\{.*)$/.exec(line);
      if (!sample) return line;
      samples.push(sample[1]);
      return `echo "@@sample ${samples.length - 1}"`;
    })
    .join('\n');
  return { instrumented, samples };
}

/** Runs the block once in `work` with bash and these options (`-euo pipefail`: a script that stops at a failure). */
async function runBlock(script: string, work: string, env: NodeJS.ProcessEnv, options: string[]): Promise<Run> {
  const run = spawn('bash', [...options, '-c', script], {
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
  return { code, stdout, stderr };
}

/** Each command's last line of output against the README's sample of it. */
function checkSamples(stdout: string, samples: string[], paste: number): void {
  const segments = stdout.split(/^@@sample \d+\n/m);
  expect(segments).toHaveLength(samples.length + 1);
  samples.forEach((sample, i) => {
    // The command printed its answer on a line of its own: the line before the marker, ended by a newline.
    expect({ paste, sample: i, endsLine: segments[i].endsWith('\n') }).toEqual({ paste, sample: i, endsLine: true });
    const printed = segments[i].trimEnd().split('\n').pop()!;
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

/** A server of "another program" on 127.0.0.1:8089 (on a free port when something else holds 8089 already). */
async function stranger(): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  let connections = 0;
  const server = createServer((_q, s) => s.end('{"stranger":true}'));
  server.on('connection', () => connections++);
  const listen = (port: number) =>
    new Promise<void>((ok, fail) => server.once('error', fail).listen(port, '127.0.0.1', () => ok()));
  await listen(8089).catch(() => listen(0));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** Signal 0 finds whether a process exists: ESRCH, there is none (EPERM would be another user's). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return false;
}

describe('README walkthrough', () => {
  jest.setTimeout(240_000);
  let work: string;
  let env: NodeJS.ProcessEnv;
  const standIns = new Set<number>();
  let held: Awaited<ReturnType<typeof stranger>>;
  let api: EntryPoint;
  let base: string;
  let script: string;
  let samples: string[];

  beforeAll(async () => {
    work = embeddedDataDir('vf-readme-');
    env = { PATH: process.env.PATH!, HOME: work, DATA_DIR: join(work, 'data') };
    held = await stranger();
    const apiPort = await closedPort();
    base = `http://127.0.0.1:${apiPort}`;
    // As written in the README, on a free port; the CLI runs compiled (npm would resolve the package from cwd).
    ({ instrumented: script, samples } = instrument(
      walkthroughBlock()
        .replaceAll('127.0.0.1:3000', `127.0.0.1:${apiPort}`)
        .replaceAll('npm run --silent cli --', `node ${join(repo, 'dist/cli/main.js')}`)
        .replaceAll('node examples/stand-in.js', `node ${join(repo, 'examples/stand-in.js')}`),
    ));
    expect(samples.length).toBeGreaterThanOrEqual(7);
    const terminal1 = readFileSync(join(repo, 'README.md'), 'utf8').match(/FORWARD_INSECURE_HOSTS=(\S+) npm start/);
    expect(terminal1?.[1]).toBe('127.0.0.1');
    api = startEntryPoint(join(repo, 'dist/main.js'), {
      cwd: work,
      env: { ...env, PORT: String(apiPort), FORWARD_INSECURE_HOSTS: terminal1![1] },
      ready: /API listening on/,
      timeoutMs: 60_000,
    });
    await api.started;
  });

  afterAll(async () => {
    for (const pid of standIns) if (!gone(pid)) process.kill(pid);
    if (api && api.child.exitCode === null) {
      api.child.kill('SIGTERM');
      await api.exited;
    }
    await held?.close();
  });

  /** What the merchant has, read with a token of the walkthrough's key. */
  async function list(path: string): Promise<any[]> {
    const token = spawnSync(process.execPath, [join(repo, 'dist/cli/main.js'), 'token', '--key', 'default.pem'], {
      cwd: work,
      env,
      encoding: 'utf8',
    });
    const answer = await http(base, `${path}${path.includes('?') ? '&' : '?'}limit=100`, {
      token: JSON.parse(token.stdout).token,
    });
    expect({ path, status: answer.status }).toEqual({ path, status: 200 });
    return answer.body.items;
  }

  /** The stand-ins a paste started (from what step 4 printed), each stopped again by step 8. */
  async function stoppedStandIns(stdout: string): Promise<string[]> {
    const started = [...stdout.matchAll(/^\{"host":"(127\.0\.0\.1:\d+)","pid":(\d+)\}$/gm)];
    for (const [, , pid] of started) standIns.add(Number(pid));
    for (const [, , pid] of started) await waitFor(() => gone(Number(pid)), { what: `stand-in ${pid} to stop` });
    return started.map(([, host]) => host);
  }

  it("runs twice with 8089 held by a stranger: README outputs, the first paste's things reused, stranger untouched", async () => {
    const hosts: string[] = [];
    for (const paste of [1, 2]) {
      const run = await runBlock(script, work, env, ['-euo', 'pipefail']);
      expect({ paste, code: run.code, stderr: run.stderr }).toEqual({ paste, code: 0, stderr: '' });
      checkSamples(run.stdout, samples, paste);
      hosts.push(...(await stoppedStandIns(run.stdout)));
      const reused = ['Reusing buyer ', 'Reusing the card an earlier paste stored', 'Reusing config '];
      for (const line of reused)
        expect({ paste, line, said: run.stdout.includes(line) }).toEqual({ paste, line, said: paste === 2 });
    }
    // Each paste had a stand-in of its own, on a port the system gave it: never the stranger's.
    expect(hosts).toHaveLength(2);
    for (const host of hosts) expect(host).not.toBe(`127.0.0.1:${held.port}`);
    // One of each, however often it is pasted; the one config now points at the second paste's stand-in.
    expect((await list('/buyers')).map((b) => b.external_identifier)).toEqual(['walkthrough-john-doe']);
    expect(await list('/payment-methods')).toHaveLength(1);
    expect((await list('/vault-forward/configs')).map((c) => c.hosts)).toEqual([[hosts[1]]]);
    const records = await list('/vault-forward/requests');
    expect(records.map((r) => [r.target_url, r.status])).toEqual(
      [...hosts].reverse().map((host) => [`http://${host}/cards`, 200]),
    );
    expect(held.connections()).toBe(0);
    // It leaves the key file the dashboard signs in with and the embedded database, nothing else.
    expect(readdirSync(work).sort()).toEqual(['data', 'default.pem']);
  });

  it('stops at step 4 with the reason when the stand-in cannot listen, and forwards nothing', async () => {
    const before = (await list('/vault-forward/requests')).length;
    // The stand-in told to take the stranger's port: as a script (-e) the block stops at step 4, and pasted line
    // by line it would go on only to steps 5 and 6, which refuse an empty STANDIN_HOST (`${…:?}` ends a
    // non-interactive shell, so the run without -e stops at step 5).
    const blocked = { ...env, STANDIN_PORT: String(held.port) };
    const cannot = `stand-in: cannot listen on 127.0.0.1:${held.port}: another program listens there.`;
    const refusal = 'STANDIN_HOST: is empty: the stand-in did not start (step 4)';
    for (const options of [
      ['-euo', 'pipefail'],
      ['-uo', 'pipefail'],
    ]) {
      const run = await runBlock(script, work, blocked, options);
      // -e: the stand-in's exit code; without: bash's for an expansion error (127).
      expect({ options, code: run.code }).toEqual({ options, code: options[0] === '-euo' ? 1 : 127 });
      expect(run.stderr).toContain(cannot);
      if (options[0] === '-uo') expect(run.stderr).toContain(refusal);
      else expect(run.stderr).not.toContain(refusal);
      // Nothing else went wrong on the way: no stack trace of a JSON reader fed nothing.
      expect(
        run.stderr.split('\n').filter((line) => line && !line.includes(cannot) && !line.includes(refusal)),
      ).toEqual([]);
      expect(await stoppedStandIns(run.stdout)).toEqual([]);
      expect(run.stdout).not.toContain('"url":"/cards"');
    }
    expect((await list('/vault-forward/requests')).length).toBe(before);
    expect(held.connections()).toBe(0);
  });

  it("serves in the foreground as docker-compose.yml's stand-in service runs it", async () => {
    const compose = readFileSync(join(repo, 'docker-compose.yml'), 'utf8');
    expect(compose).toContain('command: ["node", "/stand-in/stand-in.js", "--foreground"]');
    expect(compose).toContain('- ./examples/stand-in.js:/stand-in/stand-in.js:ro');
    const child = spawn(process.execPath, [join(repo, 'examples/stand-in.js'), '--foreground'], {
      env: { PATH: env.PATH, STANDIN_ADDRESS: '127.0.0.1', STANDIN_PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const line = await new Promise<string>((r) => child.stdout.once('data', (d: Buffer) => r(d.toString())));
      const { host, pid } = JSON.parse(line);
      expect(pid).toBe(child.pid);
      const answer = await fetch(`http://${host}/payments?x=1`, {
        method: 'POST',
        headers: { authorization: 'Bearer psp-token' },
        body: 'card',
      });
      expect(await answer.json()).toEqual({
        method: 'POST',
        url: '/payments?x=1',
        authorization: 'Bearer psp-token',
        body: 'card',
      });
    } finally {
      child.kill();
      await new Promise((r) => child.once('exit', r));
    }
  });
});
