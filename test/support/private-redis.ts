import type { ChildProcess } from 'node:child_process';
import { closedPort } from './downstream';
import { killRedisServer, NO_PERSISTENCE, startRedisServer } from './redis-server';

/**
 * A redis-server of the test's own on a free port, with no persistence (`--save '' --appendonly no`):
 * stopping it loses every key, as a Redis restarted without persistence does. The shared Redis of
 * the machine is never touched.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await closedPort());
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again, empty) and resolves once it accepts connections. */
  async restart(): Promise<void> {
    if (this.child) throw new Error('the private Redis is running');
    this.child = await startRedisServer(['--port', String(this.port), ...NO_PERSISTENCE]);
  }

  /** SIGKILL: every key is gone with it. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    await killRedisServer(child);
  }
}
