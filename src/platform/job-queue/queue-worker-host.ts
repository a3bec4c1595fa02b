import {
  BeforeApplicationShutdown,
  Inject,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { WorkerHost } from '@nestjs/bullmq';
import { DelayedError, Job } from 'bullmq';
import { jitteredMs } from '../time/jitter';
import { isDatabaseUnavailable } from '../problem/database-errors';
import type { EngineWorker } from './engine';
import { ForwardJobData, ForwardQueue, parseJobData } from './forward-queue';
import { QueueConsumers } from './queue-consumers';

/**
 * A job whose handler found the database unreachable is put off by this much (plus up to as much
 * again of jitter, so a backlog does not come back all at once), its BullMQ tries untouched.
 *
 * The jitter is the retry policy's one formula (platform/time/jitter.ts), with a floor where the backoff
 * between attempts has none: a wait of ~0 ms would run the job again at once against a database that
 * is still down, a busy loop through the worker's slots (each turn a failed database call). Nor does
 * it grow with the attempt, since an outage is not an attempt (docs/decisions/0056, 0070).
 */
const DATABASE_OUTAGE_DELAY_MS = 2_000;

/**
 * Thrown by a handler whose job cannot be tried now and is no try: put off by `delayMs` (BullMQ's
 * delayed set, its tries untouched), as a database outage is (retryLater).
 */
export class PutOff extends Error {
  constructor(
    readonly delayMs: number,
    message = 'the job is put off without a try',
  ) {
    super(message);
    this.name = 'PutOff';
  }
}

/**
 * A consumer of one of the job queues (forwards, job-end callbacks): a BullMQ WorkerHost that
 * BullModule's explorer gives its Worker. It runs its queue's own job name (`jobName`) through
 * `handleJob`, and any other (a scheduler's) through `handleScheduled`.
 *
 * A subclass is decorated `@Processor(<queue token>)`; the queue's real name (FORWARD_QUEUE_NAME and
 * what derives from it, tests' own) and the engine's Worker options are known at start-up only, so
 * QueueConsumers sets them on every consumer class of the process just before one
 * BullRegistrar.register() (BullModule's manualRegistration), in one synchronous step
 * (docs/decisions/0073, 0092). A process without a consumer provider never registers one: it only enqueues.
 */
export abstract class QueueWorkerHost
  extends WorkerHost<EngineWorker>
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly failures = new Logger('JobQueue');
  /** Absent with QUEUE_BACKEND=none (no BullModule): nothing to consume. */
  @Optional() @Inject(QueueConsumers) private readonly consumers?: QueueConsumers;
  private registered = false;

  /** The queue this host consumes (its producer facade gives the consumer's settings). */
  abstract readonly queue: ForwardQueue;
  /** The BullMQ job name of this queue's own jobs; any other is a scheduler's. */
  protected abstract readonly jobName: string;
  /** Jobs at a time, and how long a running job's lock lasts unrenewed (renewed every half of it; docs/decisions/0055). */
  abstract consumerOptions(): { concurrency: number; lockMs: number };
  /**
   * One try of a job of this queue, `attempt` being the number of the attempt it runs (the job's first
   * plus BullMQ's tries made). Resolving completes the job; throwing RetryAttempt has BullMQ count the
   * try and schedule the next with the delay it carries, while it has tries left; an error that
   * `retryLater` says is no try (the database unreachable, PutOff) puts the job off uncounted.
   */
  protected abstract handleJob(job: ForwardJobData): Promise<void>;
  /** A scheduler's job (ForwardQueue.schedule), by its name. */
  protected abstract handleScheduled(name: string): Promise<void>;
  /** The engine is back after a loss that may have emptied it. */
  protected abstract onReconnected(): void;
  /** The Worker is connected and taking jobs. */
  protected abstract onConsuming(): Promise<void>;

  /**
   * Whether the handler's error means "try later, this was not a try": the milliseconds to put the
   * job off by (BullMQ's delayed set, its tries untouched), or null for an error BullMQ counts. A
   * database outage of any length must delay jobs, not use up their tries and strand them in the
   * failed set (docs/decisions/0056).
   */
  protected retryLater(error: unknown): number | null {
    if (error instanceof PutOff) return error.delayMs;
    return isDatabaseUnavailable(error) ? jitteredMs(DATABASE_OUTAGE_DELAY_MS, 2 * DATABASE_OUTAGE_DELAY_MS) : null;
  }

  onModuleInit(): void {
    if (this.queue.backend !== 'none') this.consumers?.add(this);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.queue.backend === 'none' || !this.consumers) return;
    // Every consumer of the process is registered at the first host's call, in one step.
    this.consumers.registerAll();
    this.registered = true;
    this.worker.on('failed', (job, error) => {
      this.failures.warn({
        msg: 'queued job failed in the worker',
        queue: this.worker.name,
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
    if (job.name !== this.jobName) return this.handleScheduled(job.name);
    try {
      const { jobId, attempt } = parseJobData(job.data);
      // A put-off (moveToDelayed, skipAttempt) and a stalled job's next delivery leave attemptsMade as it was.
      await this.handleJob({ jobId, attempt: attempt + job.attemptsMade });
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
