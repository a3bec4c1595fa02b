import { Inject, Injectable, Optional } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import type { EngineWorker } from '../../../platform/job-queue/engine';
import {
  CALLBACK_JOB_NAME,
  CALLBACK_QUEUE,
  ForwardJobData,
  ForwardQueue,
} from '../../../platform/job-queue/forward-queue';
import { JobConsumer } from '../../../platform/job-queue/job-consumer';
import { consumerOptions, QueueConsumers } from '../../../platform/job-queue/queue-consumers';
import { VAULT_CALLBACK_QUEUE } from '../../../platform/redis/queues';
import { CallbackDeliveries } from './callback-deliveries';
import { putOffOrKeyStore } from './callback-jobs';

/**
 * The consumer of the job-end callbacks' queue (docs/decisions/0092): each job is one delivery, whose
 * tries are its attempts (docs/decisions/0124), each claimed by CallbackDeliveries in its row (the
 * durable record) and sent. A database outage puts the job off without spending a try, and so does
 * the vault's key store away, the claim given back first (CallbackDeliveries.handle). Lost jobs are the
 * forward queue's housekeeping's business (CallbackDeliveries.sweep), one pass for both queues.
 */
@Injectable()
@Processor(VAULT_CALLBACK_QUEUE)
export class CallbackDeliveryProcessor extends WorkerHost<EngineWorker> {
  private readonly consumer: JobConsumer;

  constructor(
    @Inject(CALLBACK_QUEUE) queue: ForwardQueue,
    private readonly deliveries: CallbackDeliveries,
    @Inject(APP_CONFIG) config: AppConfig,
    /** Absent with QUEUE_BACKEND=none (no BullModule): nothing to consume. */
    @Optional() @Inject(QueueConsumers) consumers?: QueueConsumers,
  ) {
    super();
    // As many sends at a time as forwards: each holds a slot for at most its 10 s timeout. The forwards'
    // processor sweeps both queues' rows when the engine is back.
    this.consumer = new JobConsumer(this, queue, consumers, consumerOptions(config));
  }

  async process(job: Job<ForwardJobData>, token?: string): Promise<void> {
    if (job.name !== CALLBACK_JOB_NAME) return;
    await this.consumer.run(job, token, (data) => this.deliveries.handle(data), putOffOrKeyStore);
  }
}
