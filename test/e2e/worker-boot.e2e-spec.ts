import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { dropQueueKeys } from '../support/redis-keys';
import { testDataDir } from '../support/temp-data-dir';

/**
 * The compiled worker with forwarding's core loaded (planner, executor, downstream client, record
 * writer): before ForwardingCoreModule, importing forwarding into the worker failed on unresolved
 * dependencies (pagination, auth) and pulled in controllers and the global guard.
 */
describe('dist/worker.js with ForwardingCoreModule', () => {
  // A queue of its own: the default name's housekeeping schedule would stay in the shared Redis.
  const queueName = `test-worker-boot-${randomUUID()}`;
  afterAll(() => dropQueueKeys(queueName));

  it('boots against PostgreSQL and Redis, says it waits for jobs, and exits 0 on SIGTERM', async () => {
    const heartbeat = join(testDataDir(), 'worker-heartbeat');
    const child = spawn(process.execPath, ['dist/worker.js'], {
      env: {
        PATH: process.env.PATH!,
        DATA_DIR: testDataDir(),
        // Nest's module lines are at debug (src/platform/logging/app-logger.ts); this test reads them.
        LOG_LEVEL: 'debug',
        WORKER_HEARTBEAT_FILE: heartbeat,
        DATABASE_URL: process.env.TEST_DATABASE_URL!,
        REDIS_URL: process.env.TEST_REDIS_URL!,
        FORWARD_QUEUE_NAME: queueName,
        VAULT_MASTER_KEYS: `test-k1:${Buffer.alloc(32, 1).toString('base64')}`,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "waiting for jobs" in time:\n${stdout}\n${stderr}`)), 45_000);
      child.stdout.on('data', () => {
        if (/waiting for jobs/.test(stdout)) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`exited with ${code}:\n${stdout}\n${stderr}`));
      });
    });
    // Forwarding's core is in, and nothing of the API's came with it.
    expect(stdout).toMatch(/ForwardingCoreModule dependencies initialized/);
    expect(stdout).not.toMatch(/listening|Mapped \{/i);

    // The container's health check (docker-compose.yml): healthy while the worker beats, not once it stops.
    expect(existsSync(heartbeat)).toBe(true);
    expect(healthcheck({ WORKER_HEARTBEAT_FILE: heartbeat })).toEqual({ code: 0, stderr: '' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const old = new Date(Date.now() - 31_000);
    utimesSync(heartbeat, old, old);
    expect(healthcheck({ WORKER_HEARTBEAT_FILE: heartbeat })).toEqual({
      code: 1,
      stderr: expect.stringMatching(/^unhealthy: last heartbeat 3\d s ago/),
    });
    rmSync(heartbeat);
    expect(healthcheck({ WORKER_HEARTBEAT_FILE: heartbeat })).toEqual({
      code: 1,
      stderr: expect.stringContaining('no heartbeat yet'),
    });
    expect(healthcheck({})).toEqual({ code: 1, stderr: expect.stringContaining('WORKER_HEARTBEAT_FILE is unset') });
  }, 60_000);
});

function healthcheck(env: Record<string, string>): { code: number; stderr: string } {
  const result = spawnSync(process.execPath, ['dist/app/health/worker-healthcheck.js'], {
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
  });
  return { code: result.status ?? -1, stderr: result.stderr };
}
