import { DynamicModule, Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import type { AppConfig } from '../config/config';
import { VAULT_FORWARD_QUEUE } from '../queue/queues';
import { REDIS, REDIS_AVAILABILITY, RedisAvailability } from '../queue/redis';
import { ForwardQueue, NoForwardQueue } from './forward-queue';
import { PostgresForwardQueue } from './postgres-forward-queue';
import { RedisForwardQueue } from './redis-forward-queue';

export interface QueueModuleOptions {
  config: AppConfig;
  /** The resolved database URL (DATABASE_URL, or the embedded server's). */
  databaseUrl: string;
  role: 'api' | 'worker';
  /** Tests isolate their jobs with a queue name of their own. */
  queueName?: string;
}

export interface CreateForwardQueueOptions extends QueueModuleOptions {
  redis: Redis | null;
  availability: RedisAvailability | null;
  /** Redis key prefix / PostgreSQL schema of BullMQ; BullMQ's defaults when unset. */
  namespace?: string;
}

/**
 * Builds the ForwardQueue QUEUE_BACKEND names, started (BullMQ's schema migrated on PostgreSQL).
 * In embedded mode the PostgreSQL engine is best effort: if it cannot start, queued forwarding is off
 * and the synchronous path is unaffected.
 */
export async function createForwardQueue(options: CreateForwardQueueOptions): Promise<ForwardQueue> {
  const { config } = options;
  const queueName = options.queueName ?? config.forwardQueueName ?? VAULT_FORWARD_QUEUE;
  const logger = new Logger('ForwardQueue');
  switch (config.queueBackend) {
    case 'none':
      return new NoForwardQueue();
    case 'redis': {
      if (!options.redis) throw new Error('QUEUE_BACKEND is redis but there is no Redis connection');
      const queue = new RedisForwardQueue({
        redis: options.redis,
        availability: options.availability,
        queueName,
        prefix: options.namespace,
        retryBaseMs: config.forwardRetryBaseMs,
      });
      await queue.start();
      return queue;
    }
    case 'postgres': {
      const embedded = config.databaseUrl === null;
      const queue = new PostgresForwardQueue({
        databaseUrl: options.databaseUrl,
        queueName,
        schema: options.namespace,
        retryBaseMs: config.forwardRetryBaseMs,
        role: options.role,
        sharedSession: embedded,
      });
      try {
        await queue.start();
      } catch (error) {
        await queue.close().catch(() => undefined);
        if (!embedded) throw error;
        logger.warn(
          `The job queue could not start on the embedded PostgreSQL (${(error as Error).message}): queued ` +
            `forwarding is off; synchronous forwarding works.`,
        );
        return new NoForwardQueue();
      }
      return queue;
    }
  }
}

/**
 * The queue of queued forwards (ForwardQueue) for the API, which enqueues, and the worker, which
 * processes. Global, like the database: the route and the processor inject it without importing it.
 */
@Global()
@Module({})
export class QueueModule implements OnApplicationShutdown {
  constructor(@Inject(ForwardQueue) private readonly queue: ForwardQueue) {}

  static forRoot(options: QueueModuleOptions): DynamicModule {
    return {
      module: QueueModule,
      providers: [
        {
          provide: ForwardQueue,
          inject: [REDIS, REDIS_AVAILABILITY],
          useFactory: (redis: Redis | null, availability: RedisAvailability | null) =>
            createForwardQueue({ ...options, redis, availability }),
        },
      ],
      exports: [ForwardQueue],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}
