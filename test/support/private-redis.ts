import type { ChildProcess } from 'node:child_process';
import { closedPort } from './downstream';
import { killRedisServer, NO_PERSISTENCE, startRedisServer } from './redis-server';
import { testTempDir } from './temp-data-dir';

/**
 * A redis-server of the test's own on a free port, with no persistence (`--save '' --appendonly no`):
 * stopping it loses every key, as a Redis restarted without persistence does. With `aof`, an
 * append-only file fsynced at every write in a directory of the file's own: a restart after a kill
 * comes back with every key. The shared Redis of the machine is never touched.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    private readonly persistence: string[],
  ) {}

  static async start({ aof = false }: { aof?: boolean } = {}): Promise<PrivateRedis> {
    const persistence = aof
      ? ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always']
      : NO_PERSISTENCE;
    const dir = aof ? ['--dir', testTempDir('vf-redis-aof-')] : [];
    const redis = new PrivateRedis(await closedPort(), [...persistence, ...dir]);
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again: empty, or with its append-only file's keys) and resolves once it accepts connections. */
  async restart(): Promise<void> {
    if (this.child) throw new Error('the private Redis is running');
    this.child = await startRedisServer(['--port', String(this.port), ...this.persistence]);
  }

  /** SIGSTOP: the server holds every connection and answers nothing (a hung Redis) until thaw(). */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  /** SIGCONT after freeze(). */
  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  /** SIGKILL: every key is gone with it. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    await killRedisServer(child);
  }
}
