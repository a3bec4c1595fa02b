import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { untilReady } from './child-ready';
import { closedPort } from './downstream';
import { testTempDir } from './temp-data-dir';

const BIN = '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL cluster of the test's own (initdb into a temporary directory, trust auth) on a free port
 * of 127.0.0.1, with its socket in that directory: a test can stop it under in-flight jobs
 * without touching the machine's shared PostgreSQL. initdb and postgres refuse to run as root: then
 * both run as the `postgres` OS user, who is given the directory. The directory goes with the test
 * file's other temporary directories.
 */
export class PrivatePostgres {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(): Promise<PrivatePostgres> {
    const dir = testTempDir('vf-postgres-');
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const { uid, gid } = postgresUser();
      chownSync(dir, uid, gid);
      // The run's temporary directory is root's (0700): the postgres user needs to pass through it.
      const parent = dirname(dir);
      chmodSync(parent, statSync(parent).mode | 0o111);
    }
    execFileSync(
      ...asUser(asRoot, `${BIN}/initdb`, [
        '-D',
        join(dir, 'data'),
        '-U',
        'postgres',
        '--auth=trust',
        '-E',
        'UTF8',
        '--no-sync',
      ]),
      { stdio: 'pipe' },
    );
    const pg = new PrivatePostgres(await closedPort(), dir);
    await pg.restart();
    return pg;
  }

  /** The superuser's connection to the `postgres` database (what createIsolatedDatabase creates databases from). */
  get adminUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Starts the server (again, with every row it had) and resolves once it accepts connections. */
  async restart(): Promise<void> {
    if (this.child) throw new Error('the private PostgreSQL is running');
    const args = [
      '-D',
      join(this.dir, 'data'),
      '-p',
      String(this.port),
      '-k',
      this.dir,
      '-c',
      'listen_addresses=127.0.0.1',
      // Two API processes' and two workers' pools; the default 100 is near.
      '-c',
      'max_connections=300',
      // A test's data need not survive the machine crashing; a fast shutdown still writes it all.
      '-c',
      'fsync=off',
    ];
    const child = spawn(...asUser(process.getuid?.() === 0, `${BIN}/postgres`, args), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    try {
      await untilReady(child, /database system is ready to accept connections/, 'postgres', 30_000);
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** The postmaster's pid, from its pid file (under runuser the child is runuser, not the postmaster). */
  private postmasterPid(): number {
    return Number(readFileSync(join(this.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /**
   * SIGINT to the postmaster, PostgreSQL's fast shutdown (`pg_ctl stop -m fast`): every session is ended
   * and new connections are refused until restart(). Resolves once it has exited.
   */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(this.postmasterPid(), 'SIGINT');
      } catch {
        child.kill('SIGKILL');
      }
    }
    await this.exited;
    this.child = null;
  }
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** `command args` as the postgres OS user when running as root (runuser), as is otherwise. */
function asUser(asRoot: boolean, command: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}
