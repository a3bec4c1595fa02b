import { spawn } from 'node:child_process';
import { testDataDir } from '../support/temp-data-dir';

/**
 * The start-up log as a person sees it: `node dist/main.js` in a process of its own (Nest's logger is
 * process-wide, so a second app in a Jest worker would not show its own start-up lines), until it listens.
 */
async function startUpLines(env: Record<string, string>): Promise<Array<Record<string, any>>> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    env: {
      PATH: process.env.PATH!,
      DATA_DIR: testDataDir(),
      DATABASE_URL: process.env.TEST_DATABASE_URL!,
      PORT: '0',
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not listening in time:\n${stdout}\n${stderr}`)), 45_000);
      child.stdout.on('data', (d) => {
        stdout += d;
        if (stdout.includes('API listening on')) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exited.then((code) => reject(new Error(`exited with ${code}:\n${stdout}\n${stderr}`)));
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}

describe('Start-up log', () => {
  it('keeps Nest module and route-mapping lines at debug, so the development-key warnings are what a person sees', async () => {
    // No VAULT_MASTER_KEYS, no CURSOR_SECRET: development keys (in the temporary DATA_DIR), each with its warning.
    const shown = (await startUpLines({ LOG_LEVEL: 'info' })).filter((line) => line.level >= 30);
    const contexts = new Set(shown.map((line) => line.context));
    for (const chatter of ['RouterExplorer', 'RoutesResolver', 'InstanceLoader', 'NestApplication', 'NestFactory'])
      expect(contexts).not.toContain(chatter);
    expect(shown.filter((line) => /Mapped \{/.test(line.msg))).toEqual([]);
    const warnings = shown.filter((line) => line.level === 40).map((line) => String(line.msg));
    expect(warnings.join('\n')).toMatch(/VAULT_MASTER_KEYS/);
    // A handful of lines, not fifty: the warnings, the queue line and "API listening".
    expect(shown.length).toBeLessThanOrEqual(warnings.length + 3);
  });

  it('names the Node.js it runs on, the pinned Node.js 24 that npm scripts put first on the PATH', async () => {
    const listening = (await startUpLines({ LOG_LEVEL: 'info' })).find((line) => /API listening on/.test(line.msg));
    expect(listening?.msg).toContain(`(Node.js ${process.version};`);
    // Jest runs through npm (npm test, npx jest), so this worker and the API it spawned are on the `node` dev
    // dependency, not on an older system Node.js.
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(24);
  });

  it('still logs the route map at LOG_LEVEL=debug', async () => {
    const routes = (await startUpLines({ LOG_LEVEL: 'debug' })).filter((line) => line.context === 'RouterExplorer');
    expect(routes.length).toBeGreaterThan(20);
    expect(routes.every((line) => line.level === 20)).toBe(true);
    expect(routes.map((line) => line.msg)).toContainEqual(expect.stringContaining('{/buyers, POST}'));
  });
});
