import { randomUUID } from 'node:crypto';
import { Inject, INestApplicationContext, Injectable, Module, Optional } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import Redis from 'ioredis';
import { testConfig, startTestApp } from '../support/test-app';
import { TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';
import type { AppConfig, QueueBackend } from '../../src/platform/config/config';
import type { EngineWorker } from '../../src/platform/job-queue/engine';
import {
  ForwardJobData,
  ForwardQueue,
  FORWARD_JOB_NAME,
  QueueUnavailableError,
} from '../../src/platform/job-queue/forward-queue';
import { JobConsumer } from '../../src/platform/job-queue/job-consumer';
import { QueueConsumers } from '../../src/platform/job-queue/queue-consumers';
import { QueueModule } from '../../src/platform/job-queue/queue.module';
import { VAULT_FORWARD_QUEUE } from '../../src/platform/redis/queues';
import { dropQueueKeys } from '../support/redis-keys';
import { RedisAvailability, SHARED_CLIENT_OPTIONS } from '../../src/platform/redis/redis';
import { TestRedisModule } from '../support/test-redis.module';
import { testRedisUrl } from '../support/test-services';

const REDIS_URL = testRedisUrl();

const RECORDER = Symbol('RECORDER');
interface Recorder {
  handle: (job: ForwardJobData) => Promise<void>;
  concurrency: number;
  lockMs: number;
}

/** A consumer that hands every forward job to the test's handler. */
@Injectable()
@Processor(VAULT_FORWARD_QUEUE)
class RecordingProcessor extends WorkerHost<EngineWorker> {
  private readonly consumer: JobConsumer;
  constructor(
    @Inject(RECORDER) private readonly recorder: Recorder,
    @Inject(ForwardQueue) queue: ForwardQueue,
    @Optional() @Inject(QueueConsumers) consumers?: QueueConsumers,
  ) {
    super();
    this.consumer = new JobConsumer(this, queue, consumers, recorder);
  }
  async process(job: Job<ForwardJobData>, token?: string) {
    if (job.name !== FORWARD_JOB_NAME) return;
    await this.consumer.run(
      job,
      token,
      (data) => this.recorder.handle(data),
      () => null,
    );
  }
}

@Module({})
class QueueTestModule {}

/** An application context with the QueueModule of one role, and the recording consumer when `recorder` is given. */
async function queueApp(
  config: AppConfig,
  role: 'api' | 'worker',
  queueName: string,
  redisUrl: string | null,
  recorder?: Recorder,
): Promise<{ app: INestApplicationContext; close(): Promise<void> }> {
  const redis = redisUrl ? new Redis(redisUrl, SHARED_CLIENT_OPTIONS) : null;
  const availability = redisUrl ? new RedisAvailability(redisUrl) : null;
  if (redis && availability) availability.watch('shared', redis);
  const app = await NestFactory.createApplicationContext(
    {
      module: QueueTestModule,
      imports: [
        TestRedisModule.forRoot(redis, availability),
        QueueModule.forRoot({ config, databaseUrl: config.databaseUrl!, role, queueName }),
      ],
      providers: recorder ? [{ provide: RECORDER, useValue: recorder }, RecordingProcessor] : [],
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

/** A producer and a worker of one engine on a queue of this test's own, so parallel runs never share jobs. */
async function queuesOn(backend: QueueBackend, options: { redisUrl?: string } = {}) {
  const config = testConfig({ QUEUE_BACKEND: backend, FORWARD_RETRY_BASE_MS: '10' });
  const queueName = `test-${randomUUID()}`;
  const producerApp = await queueApp(
    config,
    'api',
    queueName,
    backend === 'redis' ? (options.redisUrl ?? REDIS_URL) : null,
  );
  const workers: Array<{ close(): Promise<void> }> = [];
  return {
    producer: producerApp.app.get(ForwardQueue),
    /** Starts the worker side on this queue (or on `name`), handing it every job. */
    async worker(handle: Recorder['handle'], concurrency = 32, lockMs = 10_000, name = queueName) {
      const worker = await queueApp(config, 'worker', name, backend === 'redis' ? REDIS_URL : null, {
        handle,
        concurrency,
        lockMs,
      });
      workers.push(worker);
      return worker;
    },
    async close() {
      for (const worker of workers) await worker.close();
      await producerApp.close();
      if (backend === 'redis') await dropQueueKeys(queueName, REDIS_URL);
    },
  };
}

/** Starts the worker side, recording every job it receives, in the order they arrive. */
async function record(queues: Awaited<ReturnType<typeof queuesOn>>, concurrency = 32, name?: string) {
  const received: ForwardJobData[] = [];
  await queues.worker(async (job) => void received.push(job), concurrency, 10_000, name);
  return received;
}

const counts = (jobs: ForwardJobData[]) => {
  const seen = new Map<string, number>();
  for (const job of jobs) seen.set(`${job.jobId}/${job.attempt}`, (seen.get(`${job.jobId}/${job.attempt}`) ?? 0) + 1);
  return seen;
};

describe.each(['redis', 'postgres'] as const)('Job queue on %s', (backend) => {
  let queues: Awaited<ReturnType<typeof queuesOn>>;

  beforeEach(async () => {
    queues = await queuesOn(backend);
  });

  afterEach(async () => {
    await queues.close();
  });

  it('delivers every enqueued id to process() exactly once, duplicates included', async () => {
    const ids = Array.from({ length: 200 }, () => randomUUID());
    await Promise.all(ids.map((id) => queues.producer.enqueue(id)));
    // Enqueueing a forward again while BullMQ holds its job is a no-op (a retried request, a re-sent
    // enqueue, a later attempt: a forward has one BullMQ job for its whole life). Once it has ended,
    // BullMQ no longer holds it and the job's claim refuses the second run instead
    // (forward-jobs.e2e-spec.ts), so the worker starts after the duplicates.
    await Promise.all(ids.slice(0, 20).map((id) => queues.producer.enqueue(id, { attempt: 1 })));
    await queues.producer.enqueue(ids[0], { attempt: 2 });
    const received = await record(queues);
    await waitFor(() => received.length >= 200, { timeoutMs: 20_000, what: 'every job' });
    // A sentinel enqueued last: once it is in, any duplicate would have come before it.
    const sentinel = randomUUID();
    await queues.producer.enqueue(sentinel);
    await waitFor(() => received.some((job) => job.jobId === sentinel), { timeoutMs: 10_000, what: 'the sentinel' });

    const seen = counts(received);
    expect(seen.size).toBe(201);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    for (const id of ids) expect(seen.get(`${id}/1`)).toBe(1);
  });

  it('honours delayMs', async () => {
    const received = await record(queues);
    const delayed = randomUUID();
    const muchLater = randomUUID();
    const prompt = randomUUID();
    await queues.producer.enqueue(delayed, { delayMs: 1_500 });
    await queues.producer.enqueue(muchLater, { delayMs: 3_600_000 });
    await queues.producer.enqueue(prompt);
    await waitFor(() => received.some((job) => job.jobId === delayed), { timeoutMs: 10_000, what: 'the delayed job' });
    // Order, not time: the job enqueued after it without a delay came first, and the one due in an hour is
    // still waiting when the 1.5 s one has come (the queue is dropped with it at the end).
    expect(received.map((job) => job.jobId)).toEqual([prompt, delayed]);
  });

  it('keeps the jobs of queues with other names apart (the consumer takes its queue name at start-up)', async () => {
    const other = `test-${randomUUID()}`;
    const elsewhere = await record(queues, 32, other);
    const received = await record(queues);
    const ids = Array.from({ length: 5 }, () => randomUUID());
    await Promise.all(ids.map((id) => queues.producer.enqueue(id)));
    await waitFor(() => received.length >= ids.length, { timeoutMs: 10_000, what: 'every job' });
    // A sentinel on each queue, enqueued after every job above was taken: a job that strayed onto the other
    // queue, or came twice, would have been delivered before its sentinel.
    const here = randomUUID();
    const there = randomUUID();
    const otherProducer = await queueApp(
      testConfig({ QUEUE_BACKEND: backend }),
      'api',
      other,
      backend === 'redis' ? REDIS_URL : null,
    );
    try {
      await otherProducer.app.get(ForwardQueue).enqueue(there);
    } finally {
      await otherProducer.close();
    }
    await queues.producer.enqueue(here);
    await waitFor(() => received.some((job) => job.jobId === here), { timeoutMs: 10_000, what: 'the sentinel' });
    await waitFor(() => elsewhere.length > 0, { timeoutMs: 10_000, what: 'the other queue’s sentinel' });
    expect(received.map((job) => job.jobId).sort()).toEqual([...ids, here].sort());
    expect(elsewhere.map((job) => job.jobId)).toEqual([there]);
    if (backend === 'redis') await dropQueueKeys(other, REDIS_URL);
  });

  it('refuses an id that is not ours before it reaches the engine', async () => {
    await expect(queues.producer.enqueue('a:b')).rejects.toThrow('letters, digits');
    await expect(queues.producer.enqueue(randomUUID(), { attempt: 0 })).rejects.toThrow('attempt');
  });

  it('closes gracefully: a running handler finishes before close() resolves', async () => {
    let finished = false;
    let started = false;
    const worker = await queues.worker(async () => {
      started = true;
      await waitFor(() => closing, { timeoutMs: 10_000 });
      await new Promise((resolve) => setImmediate(resolve));
      finished = true;
    }, 1);
    let closing = false;
    await queues.producer.enqueue(randomUUID());
    await waitFor(() => started, { timeoutMs: 10_000, what: 'the handler to start' });
    closing = true;
    await worker.close();
    expect(finished).toBe(true);
  });

  // Its rate is measured by `npm run bench:queue`; here only that a backlog drains whole.
  it(`drains a backlog of 3,000 no-op jobs at concurrency 32 (${backend})`, async () => {
    const n = 3_000;
    const ids = Array.from({ length: n }, () => randomUUID());
    for (let i = 0; i < n; i += 100) await Promise.all(ids.slice(i, i + 100).map((id) => queues.producer.enqueue(id)));
    const received = await record(queues, 32);
    await waitFor(() => received.length >= n, { timeoutMs: 50_000, intervalMs: 20, what: 'every job' });
    expect(counts(received).size).toBe(n);
  }, 60_000);
});

describe('Job queue on redis: producers fail fast while Redis is unreachable', () => {
  let proxy: TcpProxy;
  let queues: Awaited<ReturnType<typeof queuesOn>>;

  beforeAll(async () => {
    proxy = await TcpProxy.start('127.0.0.1', Number(new URL(REDIS_URL).port || 6379));
    queues = await queuesOn('redis', { redisUrl: `redis://${proxy.address}` });
  });

  afterAll(async () => {
    await queues.close();
    await proxy.close();
  });

  /** Refused, not hung: a hang would run into the test's own deadline, far past ENQUEUE_TIMEOUT_MS. */
  async function expectRefusedQuickly(): Promise<void> {
    const error = await queues.producer.enqueue(randomUUID()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(QueueUnavailableError);
  }

  it('rejects within a second when the connection is cut or blackholed, and works again once Redis is back', async () => {
    const received = await record(queues);
    await waitFor(() => queues.producer.isAvailable(), { what: 'the producer to connect' });
    const before = randomUUID();
    await queues.producer.enqueue(before);

    await proxy.cut();
    await waitFor(() => !queues.producer.isAvailable(), { what: 'the producer to notice the outage' });
    await expectRefusedQuickly();
    await expectRefusedQuickly();

    // A silent network: the socket opens and nothing ever answers.
    await proxy.blackhole();
    await expectRefusedQuickly();
    expect(queues.producer.isAvailable()).toBe(false);

    await proxy.restore();
    await waitFor(() => queues.producer.isAvailable(), { timeoutMs: 10_000, what: 'the producer to reconnect' });
    const after = randomUUID();
    await queues.producer.enqueue(after);
    await waitFor(() => received.some((job) => job.jobId === after), {
      timeoutMs: 10_000,
      what: 'the job enqueued after the outage',
    });
    expect(received.some((job) => job.jobId === before)).toBe(true);
  }, 40_000);
});

describe('Job queue on redis: an API started while Redis is unreachable', () => {
  it('starts without waiting for Redis, refuses enqueues, and takes them once Redis is back', async () => {
    // BullModule builds the queue at start-up, on a producer that may not be connected yet.
    const proxy = await TcpProxy.start('127.0.0.1', Number(new URL(REDIS_URL).port || 6379));
    await proxy.cut();
    let queues: Awaited<ReturnType<typeof queuesOn>> | undefined;
    try {
      // Started while Redis is still cut: had it waited for Redis, it would wait past the test's deadline.
      queues = await queuesOn('redis', { redisUrl: `redis://${proxy.address}` });
      expect(queues.producer.isAvailable()).toBe(false);
      await expect(queues.producer.enqueue(randomUUID())).rejects.toBeInstanceOf(QueueUnavailableError);
      const received = await record(queues);

      await proxy.restore();
      const producer = queues.producer;
      await waitFor(() => producer.isAvailable(), { timeoutMs: 10_000, what: 'the producer to connect' });
      const id = randomUUID();
      await producer.enqueue(id);
      await waitFor(() => received.some((job) => job.jobId === id), { timeoutMs: 10_000, what: 'the job' });
    } finally {
      await queues?.close();
      await proxy.close();
    }
  }, 30_000);
});

describe('QueueModule in the API', () => {
  it('defaults to redis when REDIS_URL is set, and runs on postgres with its bullmq schema migrated', async () => {
    const onRedis = await startTestApp();
    try {
      const queue = onRedis.app.get(ForwardQueue);
      expect(queue.backend).toBe('redis');
      await waitFor(() => queue.isAvailable(), { what: 'the producer to connect' });
    } finally {
      await onRedis.close();
    }
    const onPostgres = await startTestApp({ env: { QUEUE_BACKEND: 'postgres' } });
    try {
      const queue = onPostgres.app.get(ForwardQueue);
      expect(queue.backend).toBe('postgres');
      await queue.enqueue(randomUUID());
      const [{ count }] = await onPostgres.db.query<Array<{ count: number }>>(
        `SELECT count(*)::int AS count FROM information_schema.tables WHERE table_schema = 'bullmq' AND table_name = 'job'`,
      );
      expect(count).toBe(1);
    } finally {
      await onPostgres.close();
    }
    const off = await startTestApp({ env: { QUEUE_BACKEND: 'none' } });
    try {
      const queue = off.app.get(ForwardQueue);
      expect(queue.isAvailable()).toBe(false);
      await expect(queue.enqueue(randomUUID())).rejects.toBeInstanceOf(QueueUnavailableError);
    } finally {
      await off.close();
    }
  });
});
