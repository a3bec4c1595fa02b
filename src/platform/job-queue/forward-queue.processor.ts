import { Inject } from '@nestjs/common';
import { ForwardJobData, ForwardQueue, FORWARD_JOB_NAME } from './forward-queue';
import { QueueWorkerHost } from './queue-worker-host';

/**
 * The consumer of the forward queue: a forward's attempt (FORWARD_JOB_NAME) and the schedulers' jobs
 * (the housekeeping; the embedded wake-up). Job-end callbacks have a queue and WorkerHost of their own
 * (src/modules/forwarding/callbacks/, docs/decisions/0092). A subclass is decorated `@Processor(VAULT_FORWARD_QUEUE)`.
 */
export abstract class ForwardQueueProcessor extends QueueWorkerHost {
  @Inject(ForwardQueue) readonly queue!: ForwardQueue;
  protected readonly jobName = FORWARD_JOB_NAME;

  /** A forward's attempt; a forward's own retries (downstream 503, …) are enqueued by the handler as attempt + 1. */
  protected abstract handleForward(job: ForwardJobData): Promise<void>;

  protected handleJob(job: ForwardJobData): Promise<void> {
    return this.handleForward(job);
  }
}
