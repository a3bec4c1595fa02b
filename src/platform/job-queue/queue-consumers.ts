import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { BullRegistrar, Processor } from '@nestjs/bullmq';
import { retryBackoff } from './backoff';
import type { AppConfig } from '../config/config';
import type { ForwardQueue } from './forward-queue';

/** The backoff base of a consumer that names none (BullMQ's retry of a handler's unexpected error). */
const DEFAULT_RETRY_BASE_MS = 1_000;

/** How a consumer's Worker runs: jobs at a time, its lock (renewed every half; docs/decisions/0055), its backoff base. */
export interface ConsumerOptions {
  concurrency: number;
  lockMs: number;
  retryBaseMs?: number;
}

/** A consumer's options from the configuration: WORKER_CONCURRENCY, QUEUE_LOCK_DURATION_MS, FORWARD_RETRY_BASE. */
export function consumerOptions(config: AppConfig): ConsumerOptions {
  return { concurrency: config.workerConcurrency, lockMs: config.queueLockMs, retryBaseMs: config.forwardRetryBaseMs };
}

/** What QueueConsumers needs of a consumer (a JobConsumer, which imports this file). */
interface QueueConsumer {
  readonly queue: Pick<ForwardQueue, 'consumer'>;
  readonly options: ConsumerOptions;
  readonly hostClass: object;
  /** Its Worker is registered: watched, waited for, and its processor told it consumes. */
  start(): Promise<void>;
  /** Stops taking jobs and lets the running ones finish. */
  stop(): Promise<void>;
}

/**
 * The consumers (JobConsumers of the processors) of this process, registered with BullModule together.
 * BullRegistrar.register() makes a Worker for every @Processor provider it finds, so it is called
 * once, after each processor's class has been given its queue's real name and its engine's Worker
 * options (known at start-up only), in the same synchronous step: an application context never sees
 * another's name, and no processor gets two Workers (docs/decisions/0092). It also starts them at
 * bootstrap and stops them first at shutdown (SIGTERM: no new jobs, the running ones finish while the
 * database is still there).
 */
@Injectable()
export class QueueConsumers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly consumers: QueueConsumer[] = [];
  private registered = false;

  constructor(@Inject(BullRegistrar) private readonly registrar: BullRegistrar) {}

  /** Called by each consumer as its processor is made, before any bootstrap. */
  add(consumer: QueueConsumer): void {
    this.consumers.push(consumer);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.consumers.length === 0) return;
    this.registerAll();
    // One after the other: each consumer's start-up (its Worker, BullMQ's schema checks) in a known order.
    for (const consumer of this.consumers) await consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.registered) await Promise.all(this.consumers.map((consumer) => consumer.stop()));
  }

  private registerAll(): void {
    this.registered = true;
    for (const consumer of this.consumers) {
      const { concurrency, lockMs, retryBaseMs } = consumer.options;
      const { queueName, options } = consumer.queue.consumer(concurrency, lockMs);
      // The engine's options (its own connection) reach EngineWorker through BullModule's explorer, with
      // the one backoff strategy every job of both queues names (RETRY_BACKOFF).
      const settings = { backoffStrategy: retryBackoff(retryBaseMs ?? DEFAULT_RETRY_BASE_MS) };
      Processor(queueName, { ...options, settings } as never)(consumer.hostClass as never);
    }
    this.registrar.register();
  }
}
