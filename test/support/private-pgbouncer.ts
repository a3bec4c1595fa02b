import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { untilReady } from './child-ready';
import { testPostgresAdminUrl } from './test-services';

/** A port nothing listens on now (the bench compiles this file too, so no import of the test downstreams). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface PgBouncerOptions {
  /** pool_mode; `transaction` unless a test says otherwise. */
  poolMode?: 'session' | 'transaction';
  /** Server connections per database and user (default_pool_size). 1 makes every client share one. */
  poolSize?: number;
  /** Where it sends connections; the run's PostgreSQL (testPostgresAdminUrl) by default. */
  server?: { host: string; port: number };
}

/**
 * A pgbouncer of the test's own (Debian's `pgbouncer` package, not its system service) on a free port, with
 * a generated ini in a temporary directory removed at stop. Any database of the server is reachable
 * through it under the same name (`* =` fallback), with `auth_type = trust` for the users the tests use.
 * pgbouncer refuses to run as root: then it is told to drop to the `postgres` user (`-u`), which the
 * files are made readable by.
 */
export class PrivatePgBouncer {
  private exited: Promise<void>;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  static async start(options: PgBouncerOptions = {}): Promise<PrivatePgBouncer> {
    const port = await freePort();
    const admin = new URL(testPostgresAdminUrl());
    const server = options.server ?? { host: admin.hostname, port: Number(admin.port || 5432) };
    const dir = mkdtempSync(join(tmpdir(), 'vf-pgbouncer-'));
    chmodSync(dir, 0o755);
    // The server's own password for the admin user (a private PostgreSQL has one), which pgbouncer logs in with.
    const password = decodeURIComponent(admin.password);
    const users = ['postgres', 'root', process.env.USER]
      .filter(Boolean)
      .map((u) => `"${u}" "${u === decodeURIComponent(admin.username) ? password : ''}"`);
    writeFileSync(join(dir, 'users.txt'), `${[...new Set(users)].join('\n')}\n`, { mode: 0o644 });
    const ini = [
      '[databases]',
      `* = host=${server.host} port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `pool_mode = ${options.poolMode ?? 'transaction'}`,
      `default_pool_size = ${options.poolSize ?? 4}`,
      'max_client_conn = 500',
      // pg sends none of these itself; a test client given options would be refused, as in production.
      'ignore_startup_parameters = extra_float_digits',
      'server_reset_query = DISCARD ALL',
      'log_connections = 0',
      'log_disconnections = 0',
    ].join('\n');
    writeFileSync(join(dir, 'pgbouncer.ini'), `${ini}\n`, { mode: 0o644 });
    const asRoot = process.getuid?.() === 0;
    // Debian installs it in /usr/sbin, which a non-root user's PATH often lacks.
    const command = existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : 'pgbouncer';
    const child = spawn(command, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const bouncer = new PrivatePgBouncer(port, dir, child);
    try {
      // Not installed: `apt-get install pgbouncer` (.ci/run does).
      await untilReady(child, /process up/, 'pgbouncer', 10_000);
    } catch (error) {
      await bouncer.stop();
      throw error;
    }
    return bouncer;
  }

  /** The same database as `directUrl`, through this pgbouncer. */
  urlFor(directUrl: string): string {
    const url = new URL(directUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** SIGTERM (pgbouncer's immediate shutdown), then the temporary directory goes. */
  async stop(): Promise<void> {
    if (this.child.pid !== undefined && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
      await this.exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
