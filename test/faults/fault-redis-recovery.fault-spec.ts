import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { FORWARD_JOB_NAME } from '../../src/platform/job-queue/forward-queue';
import { QueuedStack, startQueuedStack } from '../support/forward-jobs';
import { PrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const BACKLOG = 3_000;

/**
 * Redis restarted empty under a backlog (a private redis-server, SIGKILLed and started again without
 * persistence): every queued job's BullMQ job is gone. With the production sweep settings (overdue after
 * 60 s, a pass every 60 s of 1,000 jobs at most) the worker must still put the whole backlog back in
 * seconds, because it sees that Redis lost its data, not because the jobs are late.
 */
describe('A Redis restarted empty under a backlog gets every queued job back within seconds', () => {
  let redis: PrivateRedis;
  let stack: QueuedStack;
  let queue: Queue;
  const queueName = `test-redis-recovery-${randomUUID()}`;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    stack = await startQueuedStack(
      {
        QUEUE_BACKEND: 'redis',
        REDIS_URL: redis.url,
        FORWARD_QUEUE_NAME: queueName,
        FORWARD_INSECURE_HOSTS: '127.0.0.1',
        FORWARD_JOB_OVERDUE: '60s',
        FORWARD_JOB_SWEEP_INTERVAL: '60s',
        WORKER_CONCURRENCY: '2',
      },
      { loadDelayMs: 0 },
    );
    // The downstream holds every request: the worker's two slots stay taken and the rest of the backlog waits in Redis.
    stack.downstream.script('/load', [{ hold: true }]);
    queue = new Queue(queueName, { connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: 1 } });
    queue.on('error', () => undefined);
  }, 90_000);

  afterAll(async () => {
    await queue?.close();
    await stack?.close();
    await redis?.kill();
  }, 30_000);

  const waitingRows = async () =>
    (
      await stack.t.db.query<Array<{ id: string }>>(
        `SELECT id FROM vault_forward_jobs WHERE merchant_account_id = $1 AND status = 'queued'`,
        [stack.merchant],
      )
    ).map((row) => row.id);

  it(`${BACKLOG} queued jobs are all enqueued again within 10 s of Redis answering, each once`, async () => {
    const load = await stack.load(BACKLOG);
    expect(load.refused).toBe(0);
    const queued = await waitingRows();
    expect(queued.length).toBeGreaterThanOrEqual(BACKLOG - 2);
    expect((await queue.getJobCounts('wait')).wait).toBe(queued.length);

    await redis.kill();
    await redis.restart();
    // The acceptance point: 10 s after Redis accepts connections again, the backlog is back in it: the same
    // jobs, each once under its own id (the forward's). The count first, cheap to poll; the
    // housekeeping scheduler's job waits beside them.
    const expected = [...queued].sort();
    await waitFor(
      async () => {
        if ((await queue.getJobCounts('wait')).wait < queued.length) return false;
        const forwards = (await queue.getWaiting(0, -1)).filter((job) => job.name === FORWARD_JOB_NAME);
        return JSON.stringify(forwards.map((job) => job.id).sort()) === JSON.stringify(expected);
      },
      { timeoutMs: 10_000, intervalMs: 100, what: `the ${queued.length} queued jobs to be enqueued again` },
    );
    expect(stack.worker.output()).toMatch(
      /the job queue may have lost its jobs: every queued forward was enqueued again/,
    );
  }, 120_000);
});
