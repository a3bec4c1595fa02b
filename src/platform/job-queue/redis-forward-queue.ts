import { Inject, Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import {
  closeRedis,
  duplicateRedis,
  NO_READY_CHECK,
  REDIS,
  REDIS_AVAILABILITY,
  RedisAvailability,
  RedisClient,
} from '../redis/redis';
import { VAULT_CALLBACK_QUEUE, VAULT_FORWARD_QUEUE } from '../redis/queues';
import {
  batchedEnqueues,
  bullJobId,
  ConsumerSettings,
  EnqueueOptions,
  ForwardQueue,
  FORWARD_JOB_NAME,
  QueueUnavailableError,
  removeFailedCopy,
  SCHEDULED_DATA,
} from './forward-queue';
import type { EngineQueue, EngineQueueOptions, EngineWorker } from './engine';
import { ENQUEUE_TIMEOUT_MS, LOCK_OPTIONS } from './job-options';
import { withTimeout } from '../time/with-timeout';

/** The suffix of the key that says the job rows were swept into this Redis (see mayHaveLostJobs). */
const SWEPT_KEY = 'vault-swept';

/**
 * The producer's connection (BullModule's shared configuration on Redis): no offline queue and a command
 * timeout, so an enqueue during an outage fails at once (or within ENQUEUE_TIMEOUT_MS on a silent network)
 * instead of waiting for Redis to return, as BullMQ advises for producers behind a REST API. It is given a
 * moment to connect, so the first requests after start-up find it ready; that never fails start-up (BullMQ's
 * queue waits for it to be ready before its own start-up commands).
 */
export async function redisProducer(redis: RedisClient, availability: RedisAvailability | null): Promise<RedisClient> {
  const producer = duplicateRedis(redis, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: ENQUEUE_TIMEOUT_MS,
    ...NO_READY_CHECK,
  });
  availability?.watch('queue-producer', producer);
  if (producer.status !== 'ready')
    await withTimeout(new Promise((resolve) => producer.once('ready', resolve)), ENQUEUE_TIMEOUT_MS).catch(
      () => undefined,
    );
  return producer;
}

/**
 * BullMQ on Redis, through the queue BullModule registers (its connection the producer's above). Only a
 * consumer gets a connection that retries forever (`maxRetriesPerRequest: null`, which BullMQ requires for
 * its blocking commands); the API never creates one.
 */
@Injectable()
export class RedisForwardQueue extends ForwardQueue {
  readonly backend = 'redis' as const;
  private readonly producer: RedisClient;
  private workerConnection: RedisClient | null = null;
  private closed: Promise<void> | null = null;
  private readonly adds = batchedEnqueues(() => this.queue);
  /** The producer connection is BullModule's shared one: closed by the forward queue's facade only. */
  protected readonly ownsProducer: boolean = true;

  constructor(
    @InjectQueue(VAULT_FORWARD_QUEUE) private readonly queue: EngineQueue,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(REDIS_AVAILABILITY) private readonly availability: RedisAvailability | null,
  ) {
    super();
    this.producer = (queue.opts as unknown as EngineQueueOptions).connection as RedisClient;
    // RedisAvailability logs the outage once; BullMQ re-emits every connection error here.
    this.queue.on('error', () => undefined);
  }

  async enqueue(jobId: string, options: EnqueueOptions = {}): Promise<void> {
    const attempt = options.attempt ?? 1;
    const id = bullJobId(jobId, attempt, options.copy);
    this.refuseUnlessReady();
    try {
      if (options.replaceFailed) await withTimeout(removeFailedCopy(this.queue, id), ENQUEUE_TIMEOUT_MS);
      await withTimeout(
        this.adds.run({
          name: options.name ?? FORWARD_JOB_NAME,
          jobId,
          attempt,
          delayMs: Math.max(0, Math.round(options.delayMs ?? 0)),
          attempts: options.attempts,
          copy: options.copy,
        }),
        ENQUEUE_TIMEOUT_MS,
      );
    } catch (error) {
      throw new QueueUnavailableError('redis', this.availability?.scrub((error as Error).message) ?? 'enqueue failed');
    }
  }

  isAvailable(): boolean {
    return this.producer.status === 'ready';
  }

  async schedule(name: string, everyMs: number): Promise<void> {
    this.refuseUnlessReady();
    await this.queue.upsertJobScheduler(
      name,
      { every: everyMs },
      { name, data: SCHEDULED_DATA, opts: { removeOnComplete: true, removeOnFail: true } },
    );
  }

  /**
   * A key of ours beside BullMQ's (same prefix and queue name, so the same Cluster slot and gone with an
   * obliterate): written after a full sweep, absent once Redis lost its data. Redis keeps no key but by
   * noeviction, which BullMQ requires anyway.
   */
  async mayHaveLostJobs(): Promise<boolean> {
    this.refuseUnlessReady();
    return (await withTimeout(this.producer.exists(this.sweptKey), ENQUEUE_TIMEOUT_MS)) === 0;
  }

  async markSwept(): Promise<void> {
    this.refuseUnlessReady();
    await withTimeout(this.producer.set(this.sweptKey, new Date().toISOString()), ENQUEUE_TIMEOUT_MS);
  }

  /** Fails at once while the producer is not connected (it has no offline queue to wait in). */
  private refuseUnlessReady(): void {
    if (this.producer.status !== 'ready')
      throw new QueueUnavailableError('redis', `connection ${this.producer.status}`);
  }

  private get sweptKey(): string {
    return this.queue.toKey(SWEPT_KEY);
  }

  consumer(concurrency: number, lockMs: number): ConsumerSettings {
    if (this.workerConnection) throw new Error('this queue is consumed already');
    // Blocking commands wait for Redis through an outage; only consumers hold such connections.
    this.workerConnection = duplicateRedis(this.redis, { maxRetriesPerRequest: null, enableOfflineQueue: true });
    this.availability?.watch(this.ownsProducer ? 'queue-worker' : 'queue-worker-callbacks', this.workerConnection);
    return {
      queueName: this.queue.name,
      options: {
        engine: 'redis',
        connection: this.workerConnection,
        // The queue's (BullModule's shared configuration): hash-tagged on a Cluster.
        prefix: this.queue.opts.prefix,
        concurrency,
        ...LOCK_OPTIONS(lockMs),
      },
    };
  }

  consuming(worker: EngineWorker, onReconnected: () => void): Promise<void> {
    worker.on('error', () => undefined);
    // Redis back after a loss may have lost everything (no persistence): the producer is what the
    // caller schedules and enqueues with, so its return is the signal.
    let lost = false;
    this.producer.on('close', () => (lost = true));
    this.producer.on('ready', () => {
      if (!lost || this.closed) return;
      lost = false;
      onReconnected();
    });
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      // The consumer's Worker is closed first (its JobConsumer, before shutdown); the queue and connections go after.
      await this.queue.close().catch(() => undefined);
      if (this.workerConnection) await closeRedis(this.workerConnection);
      if (this.ownsProducer) await closeRedis(this.producer);
    })();
    return this.closed;
  }
}

/**
 * The job-end callbacks' queue on Redis: the forward queue's producer connection (BullModule's shared
 * configuration), and a blocking connection of its own for its consumer (a BullMQ Worker blocks on one
 * connection per queue; docs/decisions/0092).
 */
@Injectable()
export class RedisCallbackQueue extends RedisForwardQueue {
  protected override readonly ownsProducer = false;

  constructor(
    @InjectQueue(VAULT_CALLBACK_QUEUE) queue: EngineQueue,
    @Inject(REDIS) redis: RedisClient,
    @Inject(REDIS_AVAILABILITY) availability: RedisAvailability | null,
  ) {
    super(queue, redis, availability);
  }
}
