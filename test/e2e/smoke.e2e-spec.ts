import { ChildProcess, execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startHttpDownstream } from '../support/downstream';
import { startEntryPoint } from '../support/entry-point';
import { http } from '../support/http';
import { dropQueueKeys } from '../support/redis-keys';
import { embeddedDataDir, testDataDir } from '../support/temp-data-dir';
import { waitFor } from '../support/wait';

/** Children still alive when a test ends (it failed before stopping them): killed, or they would keep Jest alive. */
const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

/** Starts a compiled entry point as a user would (only PATH and a temp DATA_DIR besides `env`). */
function start(script: string, env: Record<string, string>, ready: RegExp, timeoutMs?: number, detached = false) {
  const entry = startEntryPoint(script, {
    env: { PATH: process.env.PATH!, DATA_DIR: testDataDir(), ...env },
    ready,
    timeoutMs,
    detached,
  });
  running.add(entry.child);
  entry.child.once('exit', () => running.delete(entry.child));
  return entry;
}

async function stop(child: ChildProcess, exited: Promise<number | null>): Promise<number | null> {
  child.kill('SIGTERM');
  return exited;
}

describe('Entry points as a user runs them (compiled dist/)', () => {
  it('npm start with nothing configured: embedded PostgreSQL, no Redis, ready, CLI alongside, clean stop', async () => {
    const dataDir = embeddedDataDir('vf-embedded-');
    // FORWARD_INSECURE_HOSTS only so the queued forward below can reach a plain-http local target.
    const api = start(
      'dist/main.js',
      { DATA_DIR: dataDir, PORT: '0', FORWARD_INSECURE_HOSTS: '127.0.0.1' },
      /API listening on (http:\/\/[^\s]+) /,
      // The first start runs initdb and every migration; on a loaded 2-core machine that takes a while.
      150_000,
    );
    const [, url] = await api.started;

    const ready = await http(url, '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { database: 'up', redis: 'disabled', queue: 'up' } });
    const { stdout } = api.output();
    expect(stdout).toContain(
      `No DATABASE_URL: using an embedded PostgreSQL with its data in ${join(dataDir, 'postgres')}`,
    );
    expect(stdout).toContain('Queued forwarding runs on postgres (the embedded PostgreSQL, development only)');
    // What a person sees on the first start: the warnings (embedded database, one per development key: vault,
    // cursors, ledger) and a few lines more, not Nest's module and route map (that is at debug).
    const shown = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .filter((line) => line.level >= 30);
    expect(
      shown
        .filter((line) => line.level === 40)
        .map((line) => line.msg)
        .join('\n'),
    ).toMatch(/embedded PostgreSQL[\s\S]*VAULT_MASTER_KEYS|VAULT_MASTER_KEYS[\s\S]*embedded PostgreSQL/);
    // (Each message named, so that a line too many says which.)
    expect(shown.map((line) => `${line.level} ${line.msg}`).slice(9)).toEqual([]);

    // The CLI finds the running embedded server instead of opening its files a second time.
    const created = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['dist/cli/main.js', 'merchant', 'create', '--name', 'Embedded', '--id', 'embedded'],
        {
          env: { PATH: process.env.PATH, DATA_DIR: dataDir },
        },
        (error, out, err) => (error ? reject(new Error(err)) : resolve(out)),
      ),
    );
    expect(JSON.parse(created)).toMatchObject({ id: 'embedded' });

    // Queued forwarding works with nothing configured: the API processes its own jobs in embedded mode.
    const cli = (...args: string[]) =>
      new Promise<any>((resolve, reject) =>
        execFile(
          process.execPath,
          ['dist/cli/main.js', ...args],
          { env: { PATH: process.env.PATH, DATA_DIR: dataDir } },
          (error, out, err) => (error ? reject(new Error(err)) : resolve(JSON.parse(out))),
        ),
      );
    const keyFile = join(dataDir, 'embedded.pem');
    const key = await cli('api-key', 'create', '--merchant', 'embedded', '--out', keyFile);
    const { token } = await cli(
      'token',
      '--key',
      keyFile,
      '--key-id',
      key.id,
      '--scopes',
      'vault-forward-configs.write,payment-methods.write,vault-forwards.write,vault-forwards.read',
    );
    const target = await startHttpDownstream();
    try {
      const targetHost = new URL(target.url).host;
      expect(
        (
          await http(url, '/vault-forward/configs', {
            method: 'POST',
            token,
            body: { display_name: 'Local', hosts: [targetHost], methods: ['POST'] },
          })
        ).status,
      ).toBe(201);
      const card = await http(url, '/payment-methods', {
        method: 'POST',
        token,
        body: { method: 'card', number: '4111111111111111', expiration_date: '12/30' },
      });
      expect(card.status).toBe(201);
      const accepted = await http(url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          prefer: 'respond-async',
          'x-vault-forward-url': `${target.url}/echo`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': card.body.id,
          'content-type': 'application/json',
        },
        rawBody: '{"number":"{{ CARD_NUMBER_1 }}"}',
      });
      expect(accepted.status).toBe(202);
      let lastSeen: unknown;
      const job = await waitFor(
        async () => {
          const found = await http(url, `/vault-forward/jobs/${accepted.body.id}`, { token });
          lastSeen = found.body;
          return found.body.status === 'succeeded' && found.body;
        },
        // A job runs within a second or two here; the margin is for a loaded CI machine.
        { what: 'the queued forward to succeed in embedded mode', timeoutMs: 60_000 },
      ).catch((error: Error) => {
        // What the job and the API said, so that a failure here can be read rather than guessed at.
        throw new Error(
          `${error.message}\njob: ${JSON.stringify(lastSeen)}\nAPI warnings and errors:\n` +
            `${warnings(api.output().all).slice(-4000)}\nAPI output:\n${api.output().all.slice(-4000)}`,
        );
      });
      expect(job.response.status).toBe(200);
      expect(target.received.at(-1)!.body.toString()).toBe('{"number":"4111111111111111"}');
    } finally {
      await target.close();
    }

    expect(existsSync(join(dataDir, 'embedded-database.json'))).toBe(true);
    const beforeStop = logLines(api.output().stdout).length;
    expect(await stop(api.child, api.exited)).toBe(0);
    expect(existsSync(join(dataDir, 'embedded-database.json'))).toBe(false);
    // Stopping warns of nothing: every connection (BullMQ's engine's included) is closed before the embedded server
    // stops, so none is terminated under its pool.
    expect(warnedAfter(api.output().stdout, beforeStop)).toEqual([]);

    // Data survives a restart.
    const again = start(
      'dist/main.js',
      { DATA_DIR: dataDir, PORT: '0' },
      /API listening on (http:\/\/[^\s]+) /,
      150_000,
    );
    await again.started;
    expect(again.output().stdout).not.toContain('Applied migrations');
    // A restart on the same data logs no error, and warns only of what is for development (the embedded
    // database, the development keys).
    expect(logged(again.output().stdout, 50)).toEqual([]);
    expect(logged(again.output().stdout, 40).filter((line) => !/embedded PostgreSQL|development/i.test(line))).toEqual(
      [],
    );
    expect(logged(again.output().stdout, 40)).toContainEqual(expect.stringContaining('embedded PostgreSQL'));

    // A killed API leaves its PostgreSQL running (SIGKILL reaches the parent only): the next start stops that
    // server and starts its own on the same data.
    again.child.kill('SIGKILL');
    await again.exited;
    const third = start(
      'dist/main.js',
      { DATA_DIR: dataDir, PORT: '0' },
      /API listening on (http:\/\/[^\s]+) /,
      150_000,
      true,
    );
    const [, thirdUrl] = await third.started;
    expect((await http(thirdUrl, '/health/ready')).status).toBe(200);
    expect(logged(third.output().stdout, 50)).toEqual([]);
    // Ctrl-C as a terminal sends it, to the whole process group: the server, in a group of its own, is not stopped
    // under the API's connections but by the API once they are closed, and nothing is warned of.
    const beforeCtrlC = logLines(third.output().stdout).length;
    process.kill(-third.child.pid!, 'SIGINT');
    expect(await third.exited).toBe(0);
    expect(warnedAfter(third.output().stdout, beforeCtrlC)).toEqual([]);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 300_000);

  it.each([
    [{ PORT: 'abc' }, 'Configuration error: PORT: must be a whole number, got "abc"'],
    [{ LOG_LEVEL: 'loud' }, 'Configuration error: LOG_LEVEL: must be one of'],
    [
      { DATABASE_URL: 'mysql://user:secret@x/db' },
      'Configuration error: DATABASE_URL: must use postgres:// or postgresql://',
    ],
    [{ VAULT_MASTER_KEYS: 'k1:tooshort' }, 'Configuration error: VAULT_MASTER_KEYS: key "k1" must be 32 bytes'],
  ])('a bad variable stops start-up with one line naming it (%p)', async (env, line) => {
    const api = start('dist/main.js', env, /never/);
    await expect(api.started).rejects.toThrow();
    expect(await api.exited).toBe(1);
    const { stderr } = api.output();
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(line);
    expect(stderr).not.toContain('secret');
  });

  it('the worker boots without HTTP, connects to PostgreSQL and Redis, and stops on SIGTERM', async () => {
    // A queue of its own: the default name's housekeeping schedule would stay in the shared Redis.
    const queueName = `test-smoke-${randomUUID()}`;
    try {
      const worker = start(
        'dist/worker.js',
        {
          DATABASE_URL: process.env.TEST_DATABASE_URL!,
          REDIS_URL: process.env.TEST_REDIS_URL!,
          FORWARD_QUEUE_NAME: queueName,
        },
        /Worker connected to PostgreSQL and Redis/,
      );
      await worker.started;
      expect(worker.output().stdout).not.toMatch(/listening/i);
      expect(await stop(worker.child, worker.exited)).toBe(0);
    } finally {
      await dropQueueKeys(queueName);
    }
  });

  it('the worker refuses to start with no queue to consume (QUEUE_BACKEND=none)', async () => {
    const worker = start(
      'dist/worker.js',
      { DATABASE_URL: process.env.TEST_DATABASE_URL!, QUEUE_BACKEND: 'none' },
      /never/,
    );
    await expect(worker.started).rejects.toThrow();
    expect(await worker.exited).toBe(1);
    expect(worker.output().stderr).toContain('Configuration error: QUEUE_BACKEND');
  });
});

/** The log lines of level warn (40) and above: what a failure's cause is usually in, however much was logged after. */
function warnings(output: string): string {
  return output
    .split('\n')
    .filter((line) => /"level":(4|5|6)0\b/.test(line))
    .join('\n');
}

/** The JSON log lines of the output, in order. */
function logLines(output: string): Array<{ level: number; msg: string }> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });
}

/** The messages of the JSON log lines at `level` (40 warn, 50 error and above). */
function logged(output: string, level: 40 | 50): string[] {
  return logLines(output)
    .filter((line) => (level === 50 ? line.level >= 50 : line.level === level))
    .map((line) => line.msg);
}

/** The warnings and errors logged after the first `count` log lines (those of a stop). */
function warnedAfter(output: string, count: number): string[] {
  return logLines(output)
    .slice(count)
    .filter((line) => line.level >= 40)
    .map((line) => line.msg);
}
