import { Logger } from '@nestjs/common';
import type { WorkerHost } from '@nestjs/bullmq';
import { DelayedError, Job } from 'bullmq';
import { putOffDelay } from './backoff';
import type { EngineWorker } from './engine';
import { ForwardJobData, ForwardQueue, parseJobData } from './forward-queue';
import type { ConsumerOptions, QueueConsumers } from './queue-consumers';

/** What a processor does around its Worker's life. */
interface ConsumerHooks {
  /** The Worker is connected and taking jobs. */
  consuming?(): Promise<void>;
  /** The engine is back after a loss that may have emptied it (a Redis restarted without persistence). */
  reconnected?(): void;
  /** Shutdown: before the Worker is closed (and its running jobs waited for). */
  stopping?(): void;
  /** Shutdown: after the Worker is closed. */
  stopped?(): void;
}

/**
 * What every consumer of a job queue (forwards, job-end callbacks) shares, by composition: a processor
 * is a plain `@Processor(<queue token>) extends WorkerHost` of its feature that makes one of these and
 * runs its jobs through `run`; QueueConsumers starts and stops it with the application.
 *
 * The queue's real name (FORWARD_QUEUE_NAME and what derives from it, tests' own) and the engine's
 * Worker options are known at start-up only, so QueueConsumers sets them on every consumer class of the
 * process just before one BullRegistrar.register() (BullModule's manualRegistration), in one
 * synchronous step (docs/decisions/0073, 0092). A process without QueueConsumers (QUEUE_BACKEND=none)
 * never registers one: it only enqueues.
 */
export class JobConsumer {
  private readonly failures = new Logger('JobQueue');

  constructor(
    private readonly host: WorkerHost<EngineWorker>,
    /** The queue consumed (its producer facade gives the consumer's settings). */
    readonly queue: ForwardQueue,
    consumers: QueueConsumers | undefined,
    readonly options: ConsumerOptions,
    private readonly hooks: ConsumerHooks = {},
  ) {
    if (queue.backend !== 'none') consumers?.add(this);
  }

  /** The consumer's class, which QueueConsumers decorates with the queue's real name and the Worker's options. */
  get hostClass(): object {
    return this.host.constructor;
  }

  /** Once registered (QueueConsumers): the Worker watched and ready, then the processor's own start. */
  async start(): Promise<void> {
    const worker = this.host.worker;
    worker.on('failed', (job, error) => {
      this.failures.warn({
        msg: 'queued job failed in the worker',
        queue: worker.name,
        job: { id: job?.id, attempts_made: job?.attemptsMade },
        error: error.message,
      });
    });
    await worker.waitUntilReady();
    await this.queue.consuming(worker, () => this.hooks.reconnected?.());
    await this.hooks.consuming?.();
  }

  async stop(): Promise<void> {
    this.hooks.stopping?.();
    await this.host.worker.close();
    this.hooks.stopped?.();
  }

  /**
   * One try of a job: `handle` gets the attempt it runs (the job's first plus BullMQ's tries made; a
   * put-off and a stalled job's next delivery leave attemptsMade as it was). Resolving completes the
   * job; throwing RetryAttempt has BullMQ count the try and schedule the next with its delay. An error
   * that `putOff` says is no try puts the job off uncounted (BullMQ's moveToDelayed + DelayedError); if
   * even that fails (the engine is the database that is down), the error goes to BullMQ as a counted
   * try, and the housekeeping re-adds the job from its row should BullMQ give up on it.
   */
  async run(
    job: Job<ForwardJobData>,
    token: string | undefined,
    handle: (data: ForwardJobData) => Promise<void>,
    putOff: (error: unknown) => number | null = putOffDelay,
  ): Promise<void> {
    try {
      const { jobId, attempt } = parseJobData(job.data);
      await handle({ jobId, attempt: attempt + job.attemptsMade });
    } catch (error) {
      const delayMs = putOff(error);
      if (delayMs === null) throw error;
      try {
        await job.moveToDelayed(Date.now() + delayMs, token);
      } catch {
        throw error;
      }
      throw new DelayedError();
    }
  }
}
