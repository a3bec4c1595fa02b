import { ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForwardRecordSpool, SpoolEntry } from '../../src/modules/forwarding/records/forward-record-spool';
import { testTempDir } from '../support/temp-data-dir';

/** The compiled spool (the e2e global setup builds dist/), so each child is a process of its own. */
const SPOOL_MODULE = join(__dirname, '..', '..', 'dist', 'forward-records', 'forward-record-spool.js');

function child(script: string, dir: string): { process: ChildProcess; output: Promise<string> } {
  const proc = spawn(
    process.execPath,
    [
      '-e',
      `const { ForwardRecordSpool } = require(${JSON.stringify(SPOOL_MODULE)}); const spool = new ` +
        `ForwardRecordSpool(${JSON.stringify(dir)}); ${script}`,
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const output = new Promise<string>((resolve) => proc.once('exit', () => resolve(out)));
  return { process: proc, output };
}

const entry = (id: string): SpoolEntry => ({
  kind: 'pending',
  at: new Date().toISOString(),
  record: {
    id,
    merchantAccountId: 'm',
    configId: null,
    method: 'POST',
    targetUrl: null,
    status: null,
    durationMs: 0,
    paymentMethodIds: [],
    authenticationIds: [],
    errorType: null,
  },
});

describe('The forward record spool shared by several processes on one machine', () => {
  it('gives each sealed file to exactly one of two processes replaying at once', async () => {
    const dir = testTempDir('vf-spool-race-');
    const names = Array.from({ length: 40 }, (_, i) => `1-feed${String(i).padStart(4, '0')}-0-${i}.jsonl`);
    for (const name of names) writeFileSync(join(dir, name), `${JSON.stringify(entry(name))}\n`);
    // As a replay does: claim, then remove once "committed" (a claim left by a dead process would be taken over).
    const claimAll =
      `(async () => { const got = []; for (const name of await spool.replayable()) { const path = await ` +
      `spool.claim(name); if (path) { got.push(name); await spool.remove(path); } } ` +
      `process.stdout.write(JSON.stringify(got)); })();`;
    const [a, b] = [child(claimAll, dir), child(claimAll, dir)];
    const [gotA, gotB] = (await Promise.all([a.output, b.output])).map((text) => JSON.parse(text) as string[]);
    expect(gotA.filter((name) => gotB.includes(name))).toEqual([]);
    expect([...gotA, ...gotB].sort()).toEqual(names);
  });

  it('leaves a running process its open file, and takes it over once that process has died', async () => {
    const dir = testTempDir('vf-spool-owner-');
    const writer = child(
      `spool.append([${JSON.stringify(entry('written-by-child'))}]).then(() => ` +
        `process.stdout.write('spooled\\n')); process.stdin.resume();`,
      dir,
    );
    await new Promise<void>((resolve) =>
      writer.process.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('spooled') && resolve()),
    );
    const spool = new ForwardRecordSpool(dir);
    expect(await spool.replayable()).toEqual([]);

    writer.process.kill('SIGKILL'); // a crash: the file stays ".open"
    await writer.output;
    const [name] = await spool.replayable();
    expect(name).toMatch(/\.open\.jsonl$/);
    const claimed = (await spool.claim(name))!;
    const ids: string[] = [];
    for await (const e of spool.read(claimed, { count: 0 })) ids.push(e.record.id);
    expect(ids).toEqual(['written-by-child']);
    await spool.remove(claimed);
    expect(await spool.replayable()).toEqual([]);
  });
});
