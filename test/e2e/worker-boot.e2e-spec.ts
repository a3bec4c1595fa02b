import { spawn } from 'node:child_process';
import { testDataDir } from '../support/temp-data-dir';

/**
 * The compiled worker with forwarding's core loaded (planner, executor, downstream client, record
 * writer): before ForwardingCoreModule, importing forwarding into the worker failed on unresolved
 * dependencies (pagination, auth) and pulled in controllers and the global guard.
 */
describe('dist/worker.js with ForwardingCoreModule', () => {
  it('boots against PostgreSQL and Redis, says it waits for jobs, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['dist/worker.js'], {
      env: {
        PATH: process.env.PATH!,
        DATA_DIR: testDataDir(),
        DATABASE_URL: process.env.TEST_DATABASE_URL!,
        REDIS_URL: process.env.TEST_REDIS_URL!,
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
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});
