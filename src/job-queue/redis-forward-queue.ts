import { Logger } from '@nestjs/common';
import { Queue, Worker } from 'bullmq';
import type Redis from 'ioredis';
import { closeRedis, NO_READY_CHECK, RedisAvailability } from '../queue/redis';
import {
  batchedEnqueues,
  bullJobId,
  dispatch,
  EnqueueOptions,
  ForwardJobData,
  ForwardJobHandler,
  ForwardQueue,
  FORWARD_JOB_NAME,
  ProcessOptions,
  QueueUnavailableError,
  removeFailedCopy,
  SCHEDULED_DATA,
} from './forward-queue';

import { ENQUEUE_TIMEOUT_MS, JOB_OPTIONS, LOCK_OPTIONS, MAX_LEN_EVENTS } from './job-options';
import { withTimeout } from '../common/with-timeout';

export interface RedisForwardQueueOptions {
  /** The process's shared connection (RedisModule); every connection here is a duplicate() of it. */
  redis: Redis;
  availability: RedisAvailability | null;
  queueName: string;
  /** BullMQ's key prefix (tests isolate themselves with their own). */
  prefix?: string;
  /** Base of BullMQ's own backoff when a handler throws. */
  retryBaseMs: number;
}

/**
 * BullMQ on Redis. The producer connection has no offline queue and a command timeout, so an
 * enqueue during an outage fails at once (or within ENQUEUE_TIMEOUT_MS on a silent network) instead
 * of waiting for Redis to return, as BullMQ advises for producers behind a REST API. Only a worker
 * gets connections that retry forever (`maxRetriesPerRequest: null`, which BullMQ requires for its
 * blocking commands); the API never creates one.
 */
export class RedisForwardQueue extends ForwardQueue {
  readonly backend = 'redis' as const;
  private readonly logger = new Logger('ForwardQueue');
  private readonly producer: Redis;
  /** Made once the producer is first ready: BullMQ's start-up commands would fail on a connection with no offline queue. */
  private queue: Queue<ForwardJobData> | null = null;
  private workerConnection: Redis | null = null;
  private worker: Worker<ForwardJobData> | null = null;
  private closed: Promise<void> | null = null;
  private readonly adds = batchedEnqueues(() => this.queue!);

  constructor(private readonly options: RedisForwardQueueOptions) {
    super();
    this.producer = options.redis.duplicate({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: ENQUEUE_TIMEOUT_MS,
      ...NO_READY_CHECK,
    });
    options.availability?.watch('queue-producer', this.producer);
    this.producer.once('ready', () => this.createQueue());
  }

  /** Gives the producer a moment to connect, so the first requests after start-up find it ready; never fails start-up. */
  async start(): Promise<void> {
    if (this.producer.status === 'ready') return this.createQueue();
    await withTimeout(new Promise((resolve) => this.producer.once('ready', resolve)), ENQUEUE_TIMEOUT_MS).catch(
      () => undefined,
    );
  }

  private createQueue(): void {
    if (this.queue || this.closed) return;
    this.queue = new Queue<ForwardJobData>(this.options.queueName, {
      connection: this.producer,
      prefix: this.options.prefix,
      defaultJobOptions: JOB_OPTIONS(this.options.retryBaseMs),
      streams: { events: { maxLen: MAX_LEN_EVENTS } },
    });
    // RedisAvailability logs the outage once; BullMQ re-emits every connection error here.
    this.queue.on('error', () => undefined);
  }

  async enqueue(jobId: string, options: EnqueueOptions = {}): Promise<void> {
    const attempt = options.attempt ?? 1;
    bullJobId(jobId, attempt);
    if (!this.queue || this.producer.status !== 'ready')
      throw new QueueUnavailableError('redis', `connection ${this.producer.status}`);
    try {
      if (options.replaceFailed) await withTimeout(removeFailedCopy(this.queue, jobId, attempt), ENQUEUE_TIMEOUT_MS);
      await withTimeout(
        this.adds.run({
          name: options.name ?? FORWARD_JOB_NAME,
          jobId,
          attempt,
          delayMs: Math.max(0, Math.round(options.delayMs ?? 0)),
        }),
        ENQUEUE_TIMEOUT_MS,
      );
    } catch (error) {
      throw new QueueUnavailableError(
        'redis',
        this.options.availability?.scrub((error as Error).message) ?? 'enqueue failed',
      );
    }
  }

  isAvailable(): boolean {
    return this.queue !== null && this.producer.status === 'ready';
  }

  async schedule(name: string, everyMs: number): Promise<void> {
    if (!this.queue || this.producer.status !== 'ready')
      throw new QueueUnavailableError('redis', `connection ${this.producer.status}`);
    await this.queue.upsertJobScheduler(
      name,
      { every: everyMs },
      { name, data: SCHEDULED_DATA, opts: { removeOnComplete: true, removeOnFail: true } },
    );
  }

  async process(handler: ForwardJobHandler, options: ProcessOptions): Promise<void> {
    if (this.worker) throw new Error('this queue is processed already');
    // Blocking commands wait for Redis through an outage; only workers hold such connections.
    const connection = this.options.redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true });
    this.options.availability?.watch('queue-worker', connection);
    this.workerConnection = connection;
    this.worker = new Worker<ForwardJobData>(this.options.queueName, dispatch(handler, options), {
      connection,
      prefix: this.options.prefix,
      concurrency: options.concurrency,
      ...LOCK_OPTIONS(options.lockMs),
      autorun: true,
    });
    this.worker.on('error', () => undefined);
    this.worker.on('failed', (job, error) => {
      this.logger.warn({
        msg: 'queued forward job failed in the worker',
        job: { id: job?.id, attempts_made: job?.attemptsMade },
        error: error.message,
      });
    });
    await this.worker.waitUntilReady();
    // Redis back after a loss may have lost everything (no persistence): the producer is what the
    // caller schedules and enqueues with, so its return is the signal.
    let lost = false;
    this.producer.on('close', () => (lost = true));
    this.producer.on('ready', () => {
      if (!lost || this.closed) return;
      lost = false;
      options.onReconnected?.();
    });
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      // Worker.close() waits for the running handlers; the queue and connections go after.
      if (this.worker) await this.worker.close();
      await this.queue?.close().catch(() => undefined);
      if (this.workerConnection) await closeRedis(this.workerConnection);
      await closeRedis(this.producer);
    })();
    return this.closed;
  }
}
