import { randomUUID } from 'node:crypto';
import { expectEachSucceededOnce, FAILOVER_QUEUE_ENV, QueuedStack, startQueuedStack } from '../support/forward-jobs';
import { http } from '../support/http';
import { PrivateSentinel, SENTINEL_NAME } from '../support/private-sentinel';
import { waitFor } from '../support/wait';

/**
 * Redis behind Sentinel (issue 25, decision 0094): 1 master, 1 replica, 3 sentinels of the test's own. The
 * master is SIGKILLed under a load of queued forwards; the sentinels promote the replica and every client of
 * the API and the worker (shared, publisher, subscriber, the queue's producer and worker connections) finds
 * it through them, with no restart. Jobs the master had not copied to the replica are put back by the sweep
 * from their rows in PostgreSQL.
 */
describe('Redis Sentinel: a failover under load', () => {
  let sentinel: PrivateSentinel;
  let stack: QueuedStack;

  beforeAll(async () => {
    sentinel = await PrivateSentinel.start();
    stack = await startQueuedStack(
      {
        ...FAILOVER_QUEUE_ENV,
        // Its host is a closed port: only the sentinels can lead a client to the master.
        REDIS_URL: 'redis://127.0.0.1:1',
        REDIS_SENTINELS: sentinel.sentinelList,
        REDIS_SENTINEL_NAME: SENTINEL_NAME,
        FORWARD_QUEUE_NAME: `test-sentinel-${randomUUID()}`,
        WORKER_CONCURRENCY: '4',
      },
      { loadDelayMs: 40 },
    );
  }, 90_000);

  afterAll(async () => {
    await stack?.close();
    await sentinel?.stop();
  }, 30_000);

  it('kills the master under load: the replica takes over, every 202 ends succeeded, each sent exactly once', async () => {
    const before = await stack.load(160);
    expect(before.refused).toBe(0);
    expect(stack.downstream.requestsTo('/load').length).toBeLessThan(before.accepted.length);

    await sentinel.killMaster();
    // Load goes on through the failover (refused with 503 until the sentinels name the new master).
    const during = await stack.load(40);
    await waitFor(async () => (await sentinel.masterPort()) === sentinel.replicaPort, {
      timeoutMs: 30_000,
      what: 'the sentinels to promote the replica',
    });
    const after = await stack.loadUntilAccepted('the API to enqueue on the new master');

    await expectEachSucceededOnce(stack, [before, during, ...after], { timeoutMs: 90_000 });
    // Both processes went on without a restart.
    expect(stack.worker.child.exitCode).toBeNull();
    expect(await http(stack.t.url, '/health/ready')).toMatchObject({ status: 200 });
  }, 240_000);
});
