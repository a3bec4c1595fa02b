import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { closedPort } from './downstream';
import { killRedisServer, NO_PERSISTENCE, startRedisServer } from './redis-server';
import { testTempDir } from './temp-data-dir';
import { waitFor } from './wait';

/** The master group's name the sentinels monitor. */
export const SENTINEL_NAME = 'vf-test-master';

/**
 * A Redis of the test's own with Sentinel: 1 master, 1 replica and 3 sentinels, on free ports, their
 * configuration files (which sentinels rewrite) in a temp dir removed after the test file. Never the
 * machine's shared Redis. Failure is detected after 1 s and a failover may be retried after 3 s, so a
 * killed master is replaced within seconds.
 */
export class PrivateSentinel {
  private constructor(
    private readonly master: { port: number; child: ChildProcess },
    private readonly replica: { port: number; child: ChildProcess },
    private readonly sentinels: Array<{ port: number; child: ChildProcess }>,
  ) {}

  static async start(): Promise<PrivateSentinel> {
    const dir = testTempDir('vf-sentinel-');
    const masterPort = await closedPort();
    const master = await startRedisServer(
      ['--port', String(masterPort), ...NO_PERSISTENCE, '--dir', dir],
      /Ready to accept connections/,
    );
    const replicaPort = await closedPort();
    const replica = await startRedisServer(
      ['--port', String(replicaPort), ...NO_PERSISTENCE, '--dir', dir, '--replicaof', '127.0.0.1', String(masterPort)],
      /MASTER <-> REPLICA sync: Finished with success/,
    );
    const sentinels: Array<{ port: number; child: ChildProcess }> = [];
    for (let i = 0; i < 3; i++) {
      const port = await closedPort();
      const file = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_NAME} 1000`,
          `sentinel failover-timeout ${SENTINEL_NAME} 3000`,
          `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
          '',
        ].join('\n'),
      );
      sentinels.push({ port, child: await startRedisServer([file, '--sentinel'], /Sentinel ID is/) });
    }
    const sentinel = new PrivateSentinel(
      { port: masterPort, child: master },
      { port: replicaPort, child: replica },
      sentinels,
    );
    // Each sentinel must have found the replica and its peers before a failover can be agreed on.
    await waitFor(async () => (await Promise.all(sentinels.map((s) => sentinel.knows(s.port)))).every(Boolean), {
      timeoutMs: 20_000,
      what: 'the sentinels to find the replica and each other',
    });
    return sentinel;
  }

  private async knows(port: number): Promise<boolean> {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      const replicas = (await client.call('SENTINEL', 'REPLICAS', SENTINEL_NAME)) as unknown[];
      const peers = (await client.call('SENTINEL', 'SENTINELS', SENTINEL_NAME)) as unknown[];
      return replicas.length === 1 && peers.length === 2;
    } finally {
      client.disconnect();
    }
  }

  /** REDIS_SENTINELS for the service. */
  get sentinelList(): string {
    return this.sentinels.map((s) => `127.0.0.1:${s.port}`).join(',');
  }

  /** The port the sentinels currently name as master. */
  async masterPort(): Promise<number> {
    const client = new Redis({ port: this.sentinels[0].port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
    try {
      const [, port] = (await client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_NAME)) as string[];
      return Number(port);
    } finally {
      client.disconnect();
    }
  }

  get originalMasterPort(): number {
    return this.master.port;
  }

  get replicaPort(): number {
    return this.replica.port;
  }

  /** SIGKILL of the master: what it had not yet copied to its replica is lost. */
  killMaster(): Promise<void> {
    return killRedisServer(this.master.child);
  }

  async stop(): Promise<void> {
    for (const s of this.sentinels) await killRedisServer(s.child);
    await killRedisServer(this.replica.child);
    await killRedisServer(this.master.child);
  }
}
