import { ChildProcess, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { closedPort } from './downstream';
import { killRedisServer, NO_PERSISTENCE, startRedisServer } from './redis-server';
import { testTempDir } from './temp-data-dir';
import { waitFor } from './wait';

const run = promisify(execFile);

/** How long a node may be unreachable before the others count it failed and its replica takes over. */
export const CLUSTER_NODE_TIMEOUT_MS = 2_000;

interface ClusterNode {
  port: number;
  child: ChildProcess;
}

/** One command on one node, on a connection of its own (a node may be down: no retries). */
async function onNode<T>(port: number, command: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await command(client);
  } finally {
    client.disconnect();
  }
}

/** `CLUSTER SLOTS`: [start, end, [host, port, id], replicas…] per range. */
type SlotRange = [number, number, ...Array<[string, number, string]>];

/**
 * A Redis Cluster of the test's own: 3 masters and 3 replicas (`redis-server --cluster-enabled yes` ×6,
 * `redis-cli --cluster create … --cluster-replicas 1`) on free ports of 127.0.0.1, without persistence,
 * their nodes.conf files in a temp dir removed after the test file. Never the machine's shared Redis. A
 * node unreachable for CLUSTER_NODE_TIMEOUT_MS is failed over to its replica.
 */
export class PrivateRedisCluster {
  private constructor(private readonly nodes: ClusterNode[]) {}

  static async start(): Promise<PrivateRedisCluster> {
    const dir = testTempDir('vf-redis-cluster-');
    const nodes: ClusterNode[] = [];
    const cluster = new PrivateRedisCluster(nodes);
    try {
      for (let i = 0; i < 6; i++) {
        const port = await closedPort();
        // The bus port too: Redis's default, port + 10000, may be taken or past 65535.
        const busPort = await closedPort();
        const args = [
          ['--port', String(port), ...NO_PERSISTENCE, '--dir', dir],
          [
            '--cluster-enabled',
            'yes',
            '--cluster-port',
            String(busPort),
            '--cluster-config-file',
            `nodes-${port}.conf`,
          ],
          ['--cluster-node-timeout', String(CLUSTER_NODE_TIMEOUT_MS)],
          // The cluster counts as settled once CLUSTER SLOTS lists every master's replica, which Redis 7.0 does only
          // once the replica has synced and its offset moved: without these a replica's first sync waits 5 s for
          // others to share it (diskless sync) and its offset moves at the master's ping, every 10 s. 8 s → 2 s.
          ['--repl-diskless-sync-delay', '0', '--repl-ping-replica-period', '1'],
        ].flat();
        nodes.push({ port, child: await startRedisServer(args) });
      }
      await run(
        'redis-cli',
        ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'],
        { timeout: 30_000 },
      );
      // Every node must agree that all slots are served, and know every replica, before a failover can happen.
      await waitFor(async () => (await Promise.all(nodes.map((n) => cluster.settled(n.port)))).every(Boolean), {
        timeoutMs: 30_000,
        what: 'the Redis Cluster to settle (3 masters with a replica each)',
      });
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  private async settled(port: number): Promise<boolean> {
    try {
      const info = await onNode(port, (c) => c.call('CLUSTER', 'INFO') as Promise<string>);
      const slots = await onNode(port, (c) => c.call('CLUSTER', 'SLOTS') as Promise<SlotRange[]>);
      return /cluster_state:ok/.test(info) && /cluster_known_nodes:6/.test(info) && slots.every((r) => r.length === 4);
    } catch {
      return false;
    }
  }

  /** REDIS_CLUSTER_NODES for the service: every node (ioredis needs only one that answers). */
  get nodeList(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  get ports(): number[] {
    return this.nodes.map((n) => n.port);
  }

  /** The nodes that are running. */
  get livePorts(): number[] {
    return this.nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null).map((n) => n.port);
  }

  /** The master and replica ports serving `key`'s slot, as a live node sees them now. */
  async servingKey(key: string): Promise<{ master: number; replicas: number[] }> {
    const port = this.livePorts[0];
    const slot = await onNode(port, (c) => c.call('CLUSTER', 'KEYSLOT', key) as Promise<number>);
    const ranges = await onNode(port, (c) => c.call('CLUSTER', 'SLOTS') as Promise<SlotRange[]>);
    const range = ranges.find(([start, end]) => slot >= start && slot <= end);
    if (!range) throw new Error(`no node serves slot ${slot}`);
    const [, , master, ...replicas] = range;
    return { master: Number(master[1]), replicas: replicas.map((r) => Number(r[1])) };
  }

  /** SIGKILL of one node: what it had not yet copied to its replica is lost. */
  killNode(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    if (!node) throw new Error(`no node on port ${port}`);
    return killRedisServer(node.child);
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) await killRedisServer(node.child);
  }
}
