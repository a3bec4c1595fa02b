import { Inject, Injectable } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { keyStoreOutageDelayMs } from '../../../platform/job-queue/backoff';
import {
  CALLBACK_JOB_NAME,
  CALLBACK_QUEUE,
  ForwardJobData,
  ForwardQueue,
} from '../../../platform/job-queue/forward-queue';
import { QueueWorkerHost } from '../../../platform/job-queue/queue-worker-host';
import { VAULT_CALLBACK_QUEUE } from '../../../platform/redis/queues';
import { VaultKeyUnavailableError } from '../../vault/vault.errors';
import { CallbackDeliveries } from './callback-deliveries';

/**
 * The consumer of the job-end callbacks' queue (docs/decisions/0092): each job is one delivery, whose
 * tries are its attempts (docs/decisions/0124), each claimed by CallbackDeliveries in its row (the
 * durable record) and sent. A database
 * outage puts the job off without spending a try (QueueWorkerHost.retryLater), and so does the vault's
 * key store away, the claim given back first (CallbackDeliveries.handle). Lost jobs are the
 * forward queue's housekeeping's business (CallbackDeliveries.sweep), one pass for both queues; the
 * embedded database's wake-up scheduler's jobs land here too and do nothing.
 */
@Injectable()
@Processor(VAULT_CALLBACK_QUEUE)
export class CallbackDeliveryProcessor extends QueueWorkerHost {
  protected readonly jobName = CALLBACK_JOB_NAME;

  constructor(
    @Inject(CALLBACK_QUEUE) readonly queue: ForwardQueue,
    private readonly deliveries: CallbackDeliveries,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  /** As many sends at a time as forwards: each holds a slot for at most its 10 s timeout. */
  consumerOptions() {
    return {
      concurrency: this.config.workerConcurrency,
      lockMs: this.config.queueLockMs,
      retryBaseMs: this.config.forwardRetryBaseMs,
    };
  }

  /** The key store away is no try either: the claim was given back before anything was sent. */
  protected override retryLater(error: unknown): number | null {
    if (error instanceof VaultKeyUnavailableError) return keyStoreOutageDelayMs();
    return super.retryLater(error);
  }

  protected handleJob(job: ForwardJobData): Promise<void> {
    return this.deliveries.handle(job);
  }

  protected async handleScheduled(): Promise<void> {}

  /** The forwards' WorkerHost sweeps both queues' rows when the engine is back. */
  protected onReconnected(): void {}

  protected async onConsuming(): Promise<void> {}
}
