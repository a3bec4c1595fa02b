import {
  DynamicModule,
  Global,
  Inject,
  Logger,
  Module,
  OnApplicationShutdown,
  Optional,
  Provider,
} from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import type { AppConfig } from '../config/config';
import { CALLBACK_QUEUE_SUFFIX, VAULT_CALLBACK_QUEUE, VAULT_FORWARD_QUEUE } from '../redis/queues';
import { CLUSTER_QUEUE_PREFIX, REDIS, REDIS_AVAILABILITY, RedisAvailability, RedisClient } from '../redis/redis';
import { EngineQueue, EngineQueueOptions, EngineWorker } from './engine';
import { CALLBACK_QUEUE, ForwardQueue, NoForwardQueue } from './forward-queue';
import { JOB_OPTIONS, MAX_LEN_EVENTS } from './job-options';
import {
  POSTGRES_POOLS,
  POSTGRES_QUEUE_OPTIONS,
  PostgresCallbackQueue,
  PostgresForwardQueue,
  PostgresQueueOptions,
  postgresPools,
} from './postgres-forward-queue';
import { PostgresPools } from './postgres-pools';
import { QueueConsumers } from './queue-consumers';
import { RedisCallbackQueue, RedisForwardQueue, redisProducer } from './redis-forward-queue';

interface QueueModuleOptions {
  config: AppConfig;
  /** The resolved database URL (DATABASE_URL, or the embedded server's). */
  databaseUrl: string;
  role: 'api' | 'worker';
  /** Tests isolate their jobs with a queue name of their own; FORWARD_QUEUE_NAME, or `vault-forwards`. */
  queueName?: string;
}

/**
 * The job queue (ForwardQueue) for the API, which enqueues, and the worker, whose
 * ForwardJobProcessor consumes it. BullModule builds the BullMQ queue (`registerQueueAsync`, injected
 * by the engine's ForwardQueue with `@InjectQueue(VAULT_FORWARD_QUEUE)`) on the engine QUEUE_BACKEND
 * names (EngineQueue), with the shared configuration of `forRootAsync`: the connection, job options and
 * event stream. Its registration is manual, so only a process with a consumer (a JobConsumer's WorkerHost) gets a Worker.
 * Global, like the database: the route and the processor inject ForwardQueue without importing it.
 * In embedded mode the PostgreSQL engine is best effort: if it cannot start, queued forwarding is off
 * and the synchronous path is unaffected.
 */
@Global()
@Module({})
export class QueueModule implements OnApplicationShutdown {
  constructor(
    @Inject(ForwardQueue) private readonly queue: ForwardQueue,
    @Inject(CALLBACK_QUEUE) private readonly callbackQueue: ForwardQueue,
    @Optional() @Inject(POSTGRES_POOLS) private readonly pools?: PostgresPools,
  ) {}

  static forRoot(options: QueueModuleOptions): DynamicModule {
    const { config } = options;
    if (config.queueBackend === 'none')
      return {
        module: QueueModule,
        providers: [
          { provide: ForwardQueue, useValue: new NoForwardQueue() },
          { provide: CALLBACK_QUEUE, useValue: new NoForwardQueue() },
        ],
        exports: [ForwardQueue, CALLBACK_QUEUE],
      };
    // The engine is chosen per queue and worker from their options (EngineQueue), not process-wide.
    BullModule.queueClass = EngineQueue;
    BullModule.workerClass = EngineWorker;
    const queueName = options.queueName ?? config.forwardQueueName ?? VAULT_FORWARD_QUEUE;
    const shared = {
      defaultJobOptions: JOB_OPTIONS(),
      streams: { events: { maxLen: MAX_LEN_EVENTS } },
      // On a Redis Cluster (decision 0107): each queue's keys in one slot (BullMQ's scripts touch many at once), and
      // no version check on the producer: BullMQ's INFO goes to a node socket not yet connected, under the producer's
      // 1 s command timeout, and one that fails on a busy machine fails the queue for good (BullMQ memoizes its
      // start-up). The consumer's connection has no timeout and still checks.
      ...(config.queueBackend === 'redis' && config.redisCluster
        ? { prefix: CLUSTER_QUEUE_PREFIX, skipVersionCheck: true }
        : {}),
    };
    const postgres: PostgresQueueOptions = {
      // BullMQ's engine LISTENs and pins its schema with a session search_path: not through a transaction
      // pooler, but over DATABASE_DIRECT_URL when one is set (decision 0108).
      databaseUrl: config.database.directUrl ?? options.databaseUrl,
      role: options.role,
    };
    const embedded = config.databaseUrl === null;
    // Both queues' connections on PostgreSQL: one producers' pool, one consumers' pool (docs/decisions/0092).
    const pools = config.queueBackend === 'postgres' ? postgresPools(postgres) : null;
    const root =
      config.queueBackend === 'redis'
        ? BullModule.forRootAsync({
            inject: [REDIS, REDIS_AVAILABILITY],
            useFactory: async (redis: RedisClient | null, availability: RedisAvailability | null) => {
              if (!redis) throw new Error('QUEUE_BACKEND is redis but there is no Redis connection');
              const connection = await redisProducer(redis, availability);
              return { ...shared, engine: 'redis', connection } satisfies EngineQueueOptions as never;
            },
            extraOptions: { manualRegistration: true },
          })
        : BullModule.forRootAsync({
            useFactory: async () => {
              // A queue given a pool checks BullMQ's schema at once: migrated first. A failure is reported
              // by PostgresForwardQueue.start (memoized), which on the embedded database turns queueing off.
              await pools!.migrate().catch(() => undefined);
              return {
                ...shared,
                engine: 'postgres',
                connection: pools!.producer(),
              } satisfies EngineQueueOptions as never;
            },
            extraOptions: { manualRegistration: true },
          });
    const engine: Provider[] =
      config.queueBackend === 'redis'
        ? [
            RedisForwardQueue,
            { provide: ForwardQueue, useExisting: RedisForwardQueue },
            RedisCallbackQueue,
            { provide: CALLBACK_QUEUE, useExisting: RedisCallbackQueue },
          ]
        : [
            { provide: POSTGRES_QUEUE_OPTIONS, useValue: postgres },
            { provide: POSTGRES_POOLS, useValue: pools },
            PostgresForwardQueue,
            {
              provide: ForwardQueue,
              inject: [PostgresForwardQueue],
              useFactory: (queue: PostgresForwardQueue) => startPostgres(queue, embedded),
            },
            PostgresCallbackQueue,
            {
              provide: CALLBACK_QUEUE,
              inject: [PostgresCallbackQueue, ForwardQueue],
              // Off with the forward queue (the embedded database could not take BullMQ's schema).
              useFactory: (queue: PostgresCallbackQueue, forwards: ForwardQueue) =>
                forwards.backend === 'none' ? closed(queue) : startPostgres(queue, embedded),
            },
          ];
    return {
      module: QueueModule,
      imports: [
        root,
        BullModule.registerQueueAsync(
          { name: VAULT_FORWARD_QUEUE, useFactory: () => ({ name: queueName }) },
          { name: VAULT_CALLBACK_QUEUE, useFactory: () => ({ name: `${queueName}${CALLBACK_QUEUE_SUFFIX}` }) },
        ),
      ],
      providers: [...engine, QueueConsumers],
      exports: [ForwardQueue, CALLBACK_QUEUE, QueueConsumers],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.callbackQueue.close();
    await this.queue.close();
    await this.pools?.close();
  }
}

async function closed(queue: ForwardQueue): Promise<ForwardQueue> {
  await queue.close().catch(() => undefined);
  return new NoForwardQueue();
}

/** Migrates BullMQ's schema; on the embedded database a failure turns queued forwarding off instead of failing start-up. */
async function startPostgres(queue: PostgresForwardQueue, embedded: boolean): Promise<ForwardQueue> {
  try {
    await queue.start();
    return queue;
  } catch (error) {
    await queue.close().catch(() => undefined);
    if (!embedded) throw error;
    new Logger('ForwardQueue').warn(
      `The job queue could not start on the embedded PostgreSQL (${(error as Error).message}): queued ` +
        `forwarding is off; synchronous forwarding works.`,
    );
    return new NoForwardQueue();
  }
}
