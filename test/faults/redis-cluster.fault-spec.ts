import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { expectEachSucceededOnce, FAILOVER_QUEUE_ENV, QueuedStack, startQueuedStack } from '../support/forward-jobs';
import { http } from '../support/http';
import { PrivateRedisCluster } from '../support/private-redis-cluster';
import { waitFor } from '../support/wait';
import { SharedCaches } from '../../src/platform/redis/shared-cache';
import { CLUSTER_QUEUE_PREFIX } from '../../src/platform/redis/redis';

const CHANNEL = 'vault-forward:cache-invalidation';

/** One command on one node of the cluster, outside the service (a plain connection, no cluster routing). */
async function onNode<T>(port: number, command: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
  try {
    return await command(client);
  } finally {
    client.disconnect();
  }
}

/**
 * Redis Cluster (issue 25, decision 0107): 3 masters and 3 replicas of the test's own. Every Redis client of
 * the API and the worker (shared, publisher, subscriber, the queue's producer and worker connections) is an
 * ioredis Cluster; BullMQ's keys carry the hash-tagged prefix, so each queue lives in one slot. The master
 * of that slot is SIGKILLed under a load of 1,000 queued forwards; its replica takes over with no restart.
 */
describe('Redis Cluster (REDIS_CLUSTER_NODES)', () => {
  let cluster: PrivateRedisCluster;
  let stack: QueuedStack;
  const queueName = `test-cluster-${randomUUID()}`;

  beforeAll(async () => {
    cluster = await PrivateRedisCluster.start();
    stack = await startQueuedStack(
      {
        ...FAILOVER_QUEUE_ENV,
        // Its host is a closed port: only the cluster's nodes can be reached.
        REDIS_URL: 'redis://127.0.0.1:1',
        REDIS_CLUSTER_NODES: cluster.nodeList,
        FORWARD_QUEUE_NAME: queueName,
        WORKER_CONCURRENCY: '16',
      },
      { loadDelayMs: 5 },
    );
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
    await cluster?.stop();
  }, 30_000);

  /** A notice published on each live node, each received by the API's subscription (on whichever node it is). */
  async function noticesFromEveryNode(): Promise<void> {
    const dropped: Array<string | null> = [];
    const name = `cluster-${randomUUID()}`;
    stack.t.get(SharedCaches).create(name, { max: 10, ttlMs: 60_000, onDrop: (key) => dropped.push(key) });
    await stack.t.get(SharedCaches).whenSubscribed();
    for (const port of cluster.livePorts) {
      const key = `from-${port}`;
      await waitFor(
        async () => {
          if (dropped.includes(key)) return true;
          await onNode(port, (c) => c.publish(CHANNEL, JSON.stringify([name, key])));
          return false;
        },
        { timeoutMs: 20_000, intervalMs: 250, what: `a notice published on node ${port} to reach the API` },
      );
    }
  }

  it('forwards synchronously and queued; the queue keys are hash-tagged; cache notices from any node arrive', async () => {
    const { t, token, downstream } = stack;
    const sync = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: { 'x-vault-forward-url': `${downstream.url}/sync`, 'x-vault-forward-http-method': 'POST' },
      body: { hello: 'sync' },
    });
    expect(sync.status).toBe(200);

    const { accepted } = await stack.load(1);
    expect(accepted).toHaveLength(1);
    await waitFor(
      async () => {
        const [row] = await t.db.query(`SELECT status FROM vault_forward_jobs WHERE id = $1`, [accepted[0]]);
        return row?.status === 'succeeded';
      },
      { timeoutMs: 30_000, what: 'the queued forward to succeed' },
    );
    // Every key of the queue sits under the hash tag, on the master of its one slot (and its replica), none elsewhere.
    const { master, replicas } = await cluster.servingKey(CLUSTER_QUEUE_PREFIX);
    const keys = await onNode(master, (c) => c.keys(`${CLUSTER_QUEUE_PREFIX}:${queueName}:*`));
    expect(keys.length).toBeGreaterThan(0);
    for (const port of cluster.livePorts.filter((p) => p !== master && !replicas.includes(p)))
      expect(await onNode(port, (c) => c.keys(`*${queueName}*`))).toEqual([]);

    await noticesFromEveryNode();
  }, 120_000);

  it('kills the queue slot’s master under 1,000 queued forwards: the replica takes over, each 202 succeeds once', async () => {
    const { t, merchant, downstream } = stack;
    const { master, replicas } = await cluster.servingKey(CLUSTER_QUEUE_PREFIX);
    expect(replicas).toHaveLength(1);
    const base = downstream.requestsTo('/load').length;
    const jobsOfMerchant = async () =>
      Number(
        (await t.db.query(`SELECT count(*) AS n FROM vault_forward_jobs WHERE merchant_account_id = $1`, [merchant]))[0]
          .n,
      );
    const jobsBefore = await jobsOfMerchant();

    const loading = stack.load(1_000);
    // Killed once the worker is busy with the backlog (and the API is most likely still enqueuing).
    await waitFor(async () => downstream.requestsTo('/load').length - base >= 100, {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: 'the worker to have sent 100 forwards',
    });
    await cluster.killNode(master);
    const first = await loading;
    await waitFor(async () => (await cluster.servingKey(CLUSTER_QUEUE_PREFIX)).master === replicas[0], {
      timeoutMs: 30_000,
      what: 'the replica to be promoted',
    });
    const after = await stack.loadUntilAccepted('the API to enqueue on the promoted replica');
    expect(first.accepted.length).toBeGreaterThan(500);

    // Attempts are not counted here (as before), only that each job ended succeeded and was sent once.
    const accepted = await expectEachSucceededOnce(stack, [first, ...after], {
      timeoutMs: 120_000,
      jobsBefore,
      sendsBefore: base,
      anyAttempts: true,
    });

    // Both processes went on without a restart, and cache notices still reach the API from every live node.
    expect(stack.worker.child.exitCode).toBeNull();
    expect(await http(t.url, '/health/ready')).toMatchObject({ status: 200 });
    await noticesFromEveryNode();
    console.log(`redis-cluster failover: ${accepted.length} accepted (${first.refused} refused during the failover)`);
  }, 300_000);
});
