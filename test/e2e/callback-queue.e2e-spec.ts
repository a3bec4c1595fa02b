import { randomUUID } from 'node:crypto';
import { Inject, INestApplicationContext, Injectable, Module, Optional } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import Redis from 'ioredis';
import { Client } from 'pg';
import { testConfig } from '../support/test-app';
import { waitFor } from '../support/wait';
import type { AppConfig, QueueBackend } from '../../src/platform/config/config';
import {
  CALLBACK_JOB_NAME,
  CALLBACK_QUEUE,
  ForwardJobData,
  ForwardQueue,
  FORWARD_JOB_NAME,
} from '../../src/platform/job-queue/forward-queue';
import type { EngineWorker } from '../../src/platform/job-queue/engine';
import { JobConsumer } from '../../src/platform/job-queue/job-consumer';
import { QueueConsumers } from '../../src/platform/job-queue/queue-consumers';
import { QueueModule } from '../../src/platform/job-queue/queue.module';
import { POSTGRES_POOLS } from '../../src/platform/job-queue/postgres-forward-queue';
import type { PostgresPools } from '../../src/platform/job-queue/postgres-pools';
import { CALLBACK_QUEUE_SUFFIX, VAULT_CALLBACK_QUEUE, VAULT_FORWARD_QUEUE } from '../../src/platform/redis/queues';
import { dropQueueKeys } from '../support/redis-keys';
import { RedisAvailability, SHARED_CLIENT_OPTIONS } from '../../src/platform/redis/redis';
import { TestRedisModule } from '../support/test-redis.module';
import { testRedisUrl } from '../support/test-services';

/** Job-end callbacks on their own queue with their own WorkerHost (issue 21, item 6; docs/decisions/0092). */

const REDIS_URL = testRedisUrl();
const SEEN = Symbol('SEEN');
const CONCURRENCY = 32;

interface Seen {
  forwards: ForwardJobData[];
  callbacks: ForwardJobData[];
}

/** A consumer of one queue that records the jobs of `name` into `into` (its queue's plumbing in a JobConsumer). */
abstract class Recording extends WorkerHost<EngineWorker> {
  private readonly consumer: JobConsumer;
  constructor(
    queue: ForwardQueue,
    consumers: QueueConsumers | undefined,
    private readonly name: string,
    private readonly into: ForwardJobData[],
  ) {
    super();
    this.consumer = new JobConsumer(this, queue, consumers, { concurrency: CONCURRENCY, lockMs: 10_000 });
  }
  async process(job: Job<ForwardJobData>, token?: string) {
    if (job.name !== this.name) return;
    await this.consumer.run(job, token, async (data) => void this.into.push(data));
  }
}

@Injectable()
@Processor(VAULT_FORWARD_QUEUE)
class RecordingForwards extends Recording {
  constructor(
    @Inject(ForwardQueue) queue: ForwardQueue,
    @Inject(SEEN) seen: Seen,
    @Optional() @Inject(QueueConsumers) consumers?: QueueConsumers,
  ) {
    super(queue, consumers, FORWARD_JOB_NAME, seen.forwards);
  }
}

@Injectable()
@Processor(VAULT_CALLBACK_QUEUE)
class RecordingCallbacks extends Recording {
  constructor(
    @Inject(CALLBACK_QUEUE) queue: ForwardQueue,
    @Inject(SEEN) seen: Seen,
    @Optional() @Inject(QueueConsumers) consumers?: QueueConsumers,
  ) {
    super(queue, consumers, CALLBACK_JOB_NAME, seen.callbacks);
  }
}

@Module({})
class CallbackQueueTestModule {}

/** A worker context: QueueModule with both queues' consumers recording what they receive. */
async function workerApp(config: AppConfig, queueName: string, seen: Seen) {
  const redis = config.queueBackend === 'redis' ? new Redis(REDIS_URL, SHARED_CLIENT_OPTIONS) : null;
  const availability = redis ? new RedisAvailability(REDIS_URL) : null;
  const app: INestApplicationContext = await NestFactory.createApplicationContext(
    {
      module: CallbackQueueTestModule,
      imports: [
        TestRedisModule.forRoot(redis, availability),
        QueueModule.forRoot({ config, databaseUrl: config.databaseUrl!, role: 'worker', queueName }),
      ],
      providers: [{ provide: SEEN, useValue: seen }, RecordingForwards, RecordingCallbacks],
    },
    { logger: false },
  );
  await app.init();
  return {
    app,
    async close() {
      await app.close();
      redis?.disconnect();
    },
  };
}

describe.each(['redis', 'postgres'] as const)('Job-end callbacks on their own queue (%s)', (backend: QueueBackend) => {
  it('callback jobs go to the callbacks queue and its WorkerHost, forward jobs to the forward one', async () => {
    const config = testConfig({ QUEUE_BACKEND: backend });
    const queueName = `test-${randomUUID()}`;
    const seen: Seen = { forwards: [], callbacks: [] };
    const worker = await workerApp(config, queueName, seen);
    try {
      const forwards = worker.app.get<ForwardQueue>(ForwardQueue);
      const callbacks = worker.app.get<ForwardQueue>(CALLBACK_QUEUE);
      expect(callbacks).not.toBe(forwards);
      const forwardIds = Array.from({ length: 5 }, () => randomUUID());
      const callbackIds = Array.from({ length: 5 }, () => randomUUID());
      await Promise.all([
        ...forwardIds.map((id) => forwards.enqueue(id, { name: FORWARD_JOB_NAME })),
        ...callbackIds.map((id) => callbacks.enqueue(id, { name: CALLBACK_JOB_NAME })),
      ]);
      await waitFor(() => seen.forwards.length >= 5 && seen.callbacks.length >= 5, {
        timeoutMs: 10_000,
        what: 'both kinds of job',
      });
      // A sentinel on each queue, enqueued after every job above was taken: a job delivered to the wrong
      // handler, or twice, would have come before its sentinel.
      const sentinels = { forward: randomUUID(), callback: randomUUID() };
      await forwards.enqueue(sentinels.forward, { name: FORWARD_JOB_NAME });
      await callbacks.enqueue(sentinels.callback, { name: CALLBACK_JOB_NAME });
      await waitFor(
        () =>
          seen.forwards.some((job) => job.jobId === sentinels.forward) &&
          seen.callbacks.some((job) => job.jobId === sentinels.callback),
        { timeoutMs: 10_000, what: 'both sentinels' },
      );
      expect(seen.forwards.map((job) => job.jobId).sort()).toEqual([...forwardIds, sentinels.forward].sort());
      expect(seen.callbacks.map((job) => job.jobId).sort()).toEqual([...callbackIds, sentinels.callback].sort());

      if (backend === 'postgres') {
        // Each Worker LISTENs on one connection of the shared consumers' pool, named after its queue.
        const client = new Client({ connectionString: config.databaseUrl! });
        await client.connect();
        try {
          const { rows } = await client.query<{ application_name: string }>(
            `SELECT application_name FROM pg_stat_activity WHERE application_name IN ($1, $2) ORDER BY 1`,
            [queueName, `${queueName}${CALLBACK_QUEUE_SUFFIX}`],
          );
          expect(rows.map((row) => row.application_name)).toEqual([queueName, `${queueName}${CALLBACK_QUEUE_SUFFIX}`]);
        } finally {
          await client.end();
        }
        // Every connection of both queues is one of the two shared pools': producers 2 (a worker's), and
        // the consumers' max(4, ⌈32/3⌉) = 11 queries + 1 LISTEN for forwards, 2 queries + 1 LISTEN for callbacks.
        const pools = worker.app.get<PostgresPools>(POSTGRES_POOLS);
        expect(pools.workerMax).toBe(11 + 1 + 3);
        const open = pools.producer().totalCount + pools.workerOpen;
        expect(open).toBeLessThanOrEqual(2 + 15);
        process.stdout.write(`callback-queue connections open after a burst: ${open} (limit ${2 + 15})\n`);
      }
    } finally {
      await worker.close();
      if (backend === 'redis') {
        await dropQueueKeys(queueName, REDIS_URL);
      }
    }
  });
});
