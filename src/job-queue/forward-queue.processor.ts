import { BeforeApplicationShutdown, Inject, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { BullRegistrar, Processor, WorkerHost } from '@nestjs/bullmq';
import { DelayedError, Job } from 'bullmq';
import type { EngineWorker } from './engine';
import { CALLBACK_JOB_NAME, ForwardJobData, ForwardQueue, FORWARD_JOB_NAME, parseJobData } from './forward-queue';

/**
 * The consumer of the job queue, a BullMQ WorkerHost that BullModule's explorer gives its Worker. One
 * Worker takes the queue's three kinds of job, by name: a forward's attempt (FORWARD_JOB_NAME), a
 * job-end callback's attempt (CALLBACK_JOB_NAME), and a scheduler's job (its name); a BullMQ Worker
 * consumes a whole queue, and one queue keeps one set of connections and one housekeeping
 * (docs/decisions/0073).
 *
 * A subclass is decorated `@Processor(VAULT_FORWARD_QUEUE)`; the queue's real name (FORWARD_QUEUE_NAME,
 * tests' own) and the engine's Worker options are known at start-up only, so they are set on the class
 * just before BullRegistrar.register() (BullModule's manualRegistration), in the same synchronous step.
 * An API process without this provider never registers a consumer: it only enqueues.
 */
export abstract class ForwardQueueProcessor
  extends WorkerHost<EngineWorker>
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly failures = new Logger('ForwardQueue');
  /** Absent with QUEUE_BACKEND=none (no BullModule): nothing to consume. */
  @Optional() @Inject(BullRegistrar) private readonly registrar?: BullRegistrar;
  @Inject(ForwardQueue) protected readonly queue!: ForwardQueue;
  private registered = false;

  /** Jobs at a time, and how long a running job's lock lasts unrenewed (renewed every half of it; docs/decisions/0055). */
  protected abstract consumerOptions(): { concurrency: number; lockMs: number };
  /**
   * A forward's attempt. Resolving completes the job; throwing counts as an infrastructure failure (a
   * crash, a Redis blip), which BullMQ retries a few times with backoff, unless `retryLater` says the
   * error is no try (the database unreachable). A forward's own retries (downstream 503, …) are the
   * handler's business: it records the attempt and enqueues attempt + 1.
   */
  protected abstract handleForward(job: ForwardJobData): Promise<void>;
  /** A job-end callback's attempt; `retryLater` applies to it as to a forward. */
  protected abstract handleCallback(job: ForwardJobData): Promise<void>;
  /** A scheduler's job (ForwardQueue.schedule), by its name. */
  protected abstract handleScheduled(name: string): Promise<void>;
  /**
   * Whether the handler's error means "try later, this was not a try": the milliseconds to put the
   * job off by (BullMQ's delayed set, its tries untouched), or null for an error BullMQ counts. A
   * database outage of any length must delay jobs, not use up their tries and strand them in the
   * failed set (docs/decisions/0056).
   */
  protected abstract retryLater(error: unknown): number | null;
  /** The engine is back after a loss that may have emptied it: schedule and sweep again. */
  protected abstract onReconnected(): void;
  /** The Worker is connected and taking jobs. */
  protected abstract onConsuming(): Promise<void>;

  async onApplicationBootstrap(): Promise<void> {
    if (this.queue.backend === 'none' || !this.registrar) return;
    const { concurrency, lockMs } = this.consumerOptions();
    const { queueName, options } = this.queue.consumer(concurrency, lockMs);
    // The engine's options (its own connection) reach EngineWorker through BullModule's explorer.
    Processor(queueName, options as never)(this.constructor);
    this.registrar.register();
    this.registered = true;
    this.worker.on('failed', (job, error) => {
      this.failures.warn({
        msg: 'queued forward job failed in the worker',
        job: { id: job?.id, attempts_made: job?.attemptsMade },
        error: error.message,
      });
    });
    await this.worker.waitUntilReady();
    await this.queue.consuming(this.worker, () => this.onReconnected());
    await this.onConsuming();
  }

  /** SIGTERM: stop taking jobs and let the running ones finish, while the database is still there. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.registered) await this.worker.close();
  }

  /**
   * Runs a job by its name. A handler error that `retryLater` says is not a try (the database
   * unreachable) puts the job off without counting it (BullMQ's moveToDelayed + DelayedError pattern);
   * if even that fails (the engine is the database that is down), the error goes to BullMQ as a counted
   * try, and the housekeeping revives the job once the database is back should its tries run out.
   */
  async process(job: Job<ForwardJobData>, token?: string): Promise<void> {
    if (job.name !== FORWARD_JOB_NAME && job.name !== CALLBACK_JOB_NAME) return this.handleScheduled(job.name);
    try {
      const data = parseJobData(job.data);
      await (job.name === FORWARD_JOB_NAME ? this.handleForward(data) : this.handleCallback(data));
    } catch (error) {
      const delayMs = this.retryLater(error);
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
