import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { signToken } from '../../src/modules/merchants/auth/token-signer';
import { closedPort } from './downstream';
import { EntryPoint, startEntryPoint } from './entry-point';
import { http, HttpResult } from './http';
import { createIsolatedDatabase, IsolatedDatabase } from './isolated-database';
import { PrivateRedis } from './private-redis';
import { PrivateRedisCluster } from './private-redis-cluster';
import { entryPointEnv } from './test-app';

const run = promisify(execFile);

/**
 * The Redis a fleet's processes share, as the environment that points them at it and how to stop it.
 * A private redis-server by default (privateFleetRedis); a Redis Cluster or Sentinel variant only has
 * to produce other `env` (REDIS_CLUSTER_NODES, REDIS_SENTINELS…): the fleet passes it through as is.
 */
export interface FleetRedis {
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function privateFleetRedis(): Promise<FleetRedis> {
  const redis = await PrivateRedis.start();
  return { env: { REDIS_URL: redis.url }, close: () => redis.kill() };
}

/**
 * A Redis Cluster of the fleet's own (3 masters, 3 replicas: PrivateRedisCluster), every process an
 * ioredis Cluster client of it (decision 0107). REDIS_URL stays the switch that turns Redis on; its host is
 * a closed port, so only the cluster's nodes can be reached.
 */
export async function privateClusterFleetRedis(): Promise<FleetRedis> {
  const cluster = await PrivateRedisCluster.start();
  return {
    env: { REDIS_URL: 'redis://127.0.0.1:1', REDIS_CLUSTER_NODES: cluster.nodeList },
    close: () => cluster.stop(),
  };
}

export type FleetRole = 'api' | 'worker';

export interface FleetOptions {
  /** 2 by default. */
  apis?: number;
  /** 3 by default. */
  workers?: number;
  /** A private redis-server by default. */
  redis?: FleetRedis;
  /** Settings for every process. */
  env?: Record<string, string>;
}

/** One compiled entry point of the fleet; `respawn()` starts it again with the same port, spool and env. */
export class FleetProcess {
  entry!: EntryPoint;
  /** The API's base URL (http://127.0.0.1:port); '' for a worker. */
  url = '';
  /** Out of the balancer's rotation: a request to it failed to connect (a passive health check). */
  outOfRotation = false;

  constructor(
    readonly role: FleetRole,
    readonly name: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  get alive(): boolean {
    return !!this.entry && this.entry.child.exitCode === null && this.entry.child.signalCode === null;
  }

  get pid(): number {
    return this.entry.child.pid!;
  }

  async start(): Promise<void> {
    this.entry =
      this.role === 'api'
        ? startEntryPoint('dist/main.js', {
            env: this.env,
            ready: /API listening on (http:\/\/\S+) /,
            timeoutMs: 90_000,
          })
        : startEntryPoint('dist/worker.js', { env: this.env, ready: /waiting for jobs/, timeoutMs: 90_000 });
    const ready = await this.entry.started;
    this.outOfRotation = false;
    if (this.role === 'api') this.url = ready[1].replace('[::1]', '127.0.0.1');
  }

  /** SIGKILL, and waits for the exit: nothing of the process's graceful stop runs. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    this.entry.child.kill('SIGKILL');
    await this.entry.exited;
  }

  respawn(): Promise<void> {
    if (this.alive) throw new Error(`${this.name} is running`);
    return this.start();
  }
}

export interface FleetKey {
  id: string;
  privateKeyPem: string;
  token(scopes?: string[]): Promise<string>;
}

/**
 * Issue 25, item 4: several API and worker processes, each a real compiled entry point
 * (`dist/main.js`, `dist/worker.js`, one process each: WEB_CONCURRENCY=WORKER_PROCESSES=1), on one
 * database of their own (createIsolatedDatabase) and one Redis (a private one by default), as a
 * deployment of N APIs behind a load balancer and M workers is. Each API has its own port and its own
 * forward-record spool directory (docs/decisions/0110), all under one temporary directory removed by
 * close(). `request()` is the load balancer: round-robin over the APIs, taking one out of rotation
 * once a request to it fails to connect, so a test sees what the clients of a killed API see.
 */
export class Fleet {
  readonly apis: FleetProcess[] = [];
  readonly workers: FleetProcess[] = [];
  private turn = 0;

  private constructor(
    readonly db: IsolatedDatabase,
    readonly redis: FleetRedis,
    readonly dir: string,
    private readonly baseEnv: NodeJS.ProcessEnv,
  ) {}

  /** prepare(), then every process started. */
  static async start(options: FleetOptions = {}): Promise<Fleet> {
    const fleet = await Fleet.prepare(options);
    try {
      await fleet.startProcesses();
    } catch (error) {
      await fleet.close();
      throw error;
    }
    return fleet;
  }

  /**
   * The database (migrated), the Redis and the temporary directory, and the processes ready to start but not
   * started: the CLI (merchant accounts, API keys) can run while they start (startProcesses).
   */
  static async prepare(options: FleetOptions = {}): Promise<Fleet> {
    const dir = mkdtempSync(join(tmpdir(), 'vf-fleet-'));
    let db: IsolatedDatabase | undefined;
    let redis: FleetRedis | undefined;
    try {
      db = await createIsolatedDatabase('fleet');
      redis = options.redis ?? (await privateFleetRedis());
      const base = entryPointEnv({
        DATABASE_URL: db.url,
        CURSOR_SECRET: 'test-cursor-secret-not-for-production-0123456789',
        WEB_CONCURRENCY: '1',
        WORKER_PROCESSES: '1',
        QUEUE_BACKEND: 'redis',
        DATABASE_POOL_SIZE: '4',
        ...options.env,
      });
      // The Redis settings are exactly the variant's: a Cluster or Sentinel variant may not want REDIS_URL.
      delete base.REDIS_URL;
      Object.assign(base, redis.env);
      const fleet = new Fleet(db, redis, dir, base);
      for (let i = 1; i <= (options.apis ?? 2); i++) fleet.apis.push(await fleet.process('api', `api-${i}`));
      for (let i = 1; i <= (options.workers ?? 3); i++)
        fleet.workers.push(await fleet.process('worker', `worker-${i}`));
      return fleet;
    } catch (error) {
      await redis?.close();
      await db?.drop();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Every process, in parallel: five Node.js start-ups one after the other would cost a suite most of its time. */
  async startProcesses(): Promise<void> {
    await Promise.all([...this.apis, ...this.workers].map((p) => p.start()));
  }

  private async process(role: FleetRole, name: string): Promise<FleetProcess> {
    const own = mkdtempSync(join(this.dir, `${name}-`));
    const env: NodeJS.ProcessEnv = { ...this.baseEnv, DATA_DIR: own };
    if (role === 'api') {
      // A fixed port, so a respawned API is found where its clients (the balancer) look for it.
      env.PORT = String(await closedPort());
      env.HOST = '127.0.0.1';
      env.FORWARD_RECORD_SPOOL_DIR = join(own, 'spool');
    }
    return new FleetProcess(role, name, env);
  }

  /** The next API in turn among those in rotation (all of them if none is). */
  next(): FleetProcess {
    const inRotation = this.apis.filter((api) => !api.outOfRotation);
    const from = inRotation.length > 0 ? inRotation : this.apis;
    return from[this.turn++ % from.length];
  }

  /** Starts again every process that is not running (each on its own port and spool). */
  async heal(): Promise<void> {
    await Promise.all([...this.apis, ...this.workers].filter((p) => !p.alive).map((p) => p.respawn()));
  }

  /**
   * One request through the next API in turn; the API it went to comes back with the answer or the
   * error. Like a load balancer's passive health check, an API a request failed to reach leaves the
   * rotation until it is started again; the failed request itself is not retried elsewhere (a POST
   * may have been taken in), its client sees the connection error.
   */
  async request(
    path: string,
    init: Parameters<typeof http>[2] = {},
  ): Promise<{ api: FleetProcess; result?: HttpResult; error?: string }> {
    const api = this.next();
    try {
      return { api, result: await http(api.url, path, init) };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      api.outOfRotation = true;
      return { api, error: cause?.code ?? (error as Error).message };
    }
  }

  /** The CLI (`dist/cli/main.js`) on the fleet's database: its JSON answer. */
  async cli(...args: string[]): Promise<Record<string, any>> {
    const { stdout } = await run(process.execPath, ['dist/cli/main.js', ...args], {
      env: { ...this.baseEnv, DATA_DIR: this.dir },
      timeout: 60_000,
    });
    return JSON.parse(stdout) as Record<string, any>;
  }

  /** A merchant account made through the CLI, as an operator does. */
  async merchant(id: string): Promise<string> {
    return (await this.cli('merchant', 'create', '--name', `Fleet ${id}`, '--id', id)).id as string;
  }

  /** An API key of the merchant account, made through the CLI, and tokens signed with it. */
  async apiKey(merchantAccountId: string): Promise<FleetKey> {
    const key = await this.cli('api-key', 'create', '--merchant', merchantAccountId, '--out', '-');
    const privateKeyPem = key.private_key as string;
    return {
      id: key.id as string,
      privateKeyPem,
      token: (scopes?: string[]) => signToken({ privateKeyPem, keyId: key.id as string, scopes }),
    };
  }

  /** Every process SIGKILLed, then the Redis, the database and the temporary directory removed. */
  async close(): Promise<void> {
    await Promise.all([...this.apis, ...this.workers].map((p) => p.kill()));
    await this.redis.close();
    await this.db.drop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
