import { Inject, Injectable } from '@nestjs/common';
import { BullRegistrar, Processor } from '@nestjs/bullmq';
import { retryBackoff } from './backoff';
import type { ForwardQueue } from './forward-queue';

/** The backoff base of a consumer that names none (BullMQ's retry of a handler's unexpected error). */
const DEFAULT_RETRY_BASE_MS = 1_000;

/** What QueueConsumers needs of a consumer (a QueueWorkerHost, which imports this file). */
interface QueueConsumer {
  readonly queue: Pick<ForwardQueue, 'consumer'>;
  consumerOptions(): { concurrency: number; lockMs: number; retryBaseMs?: number };
}

/**
 * The consumers (QueueWorkerHosts) of this process, registered with BullModule together.
 * BullRegistrar.register() makes a Worker for every @Processor provider it finds, so it is called
 * once, after each host's class has been given its queue's real name and its engine's Worker options
 * (known at start-up only), in the same synchronous step: an application context never sees
 * another's name, and no host gets two Workers (docs/decisions/0092).
 */
@Injectable()
export class QueueConsumers {
  private readonly hosts: QueueConsumer[] = [];
  private registered = false;

  constructor(@Inject(BullRegistrar) private readonly registrar: BullRegistrar) {}

  /** Called by each host at module init, before any host's bootstrap. */
  add(host: QueueConsumer): void {
    this.hosts.push(host);
  }

  registerAll(): void {
    if (this.registered) return;
    this.registered = true;
    for (const host of this.hosts) {
      const { concurrency, lockMs, retryBaseMs } = host.consumerOptions();
      const { queueName, options } = host.queue.consumer(concurrency, lockMs);
      // The engine's options (its own connection) reach EngineWorker through BullModule's explorer, with
      // the one backoff strategy every job of both queues names (RETRY_BACKOFF).
      const settings = { backoffStrategy: retryBackoff(retryBaseMs ?? DEFAULT_RETRY_BASE_MS) };
      Processor(queueName, { ...options, settings } as never)(host.constructor);
    }
    this.registrar.register();
  }
}
