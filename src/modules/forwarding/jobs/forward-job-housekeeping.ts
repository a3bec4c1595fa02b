import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { ForwardQueue } from '../../../platform/job-queue/forward-queue';
import { CallbackDeliveries } from '../callbacks/callback-deliveries';
import { ForwardJobsRepository } from './forward-jobs.repository';
import { LostJobRecovery } from './lost-job-recovery';

/**
 * The repeatable BullMQ job (a job scheduler, one per queue however many workers upsert it) that
 * re-enqueues overdue jobs and erases answers no one needs any more (decision 0139) and callbacks.
 */
export const HOUSEKEEPING_JOB = 'forward-jobs-housekeeping';
const START_PASS_TRIES = 5;
const START_PASS_RETRY_MS = 1_000;
/**
 * Tries while the tables are not there yet (undefined_table): the API applies the migrations after its modules
 * start, which on a new database takes seconds.
 */
const MIGRATION_WAIT_TRIES = 120;
const UNDEFINED_TABLE = '42P01';
/** Overdue jobs enqueued again per pass at most (the next pass takes the rest). */
const SWEEP_BATCH = 1_000;
/**
 * How long an ended job's answer stays after the merchant first had it (a read of the job, or its callback
 * delivered): a retried read, or the read a callback prompts, still gets it (decision 0139).
 */
export const ANSWER_GRACE_SECONDS = 15 * 60;

/**
 * The recovery of what BullMQ lost or gave up on, from the job rows (the truth), and the purges:
 * run by the housekeeping scheduler's jobs in ForwardJobProcessor, at its start and when the engine
 * comes back.
 */
@Injectable()
export class ForwardJobHousekeeping implements OnModuleDestroy {
  private readonly logger = new Logger('ForwardJobs');
  /** Set at shutdown: the start pass's quiet tries end there, so none runs on closed connections. */
  private stopping = false;

  constructor(
    private readonly store: ForwardJobsRepository,
    private readonly queue: ForwardQueue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly callbacks: CallbackDeliveries,
    private readonly lostJobs: LostJobRecovery,
  ) {}

  /** Upserts the housekeeping scheduler and runs one pass at once; never throws (logged, tried again at the next reconnect or start). */
  async start(why: string): Promise<void> {
    try {
      await this.queue.schedule(HOUSEKEEPING_JOB, this.config.forwardJobSweepSeconds * 1000);
    } catch (error) {
      this.logger.warn({
        msg: 'could not schedule the queued forward housekeeping',
        reason: why,
        error: (error as Error).message,
      });
    }
    // At start-up the pass can race BullMQ's own set-up of its schema, or the migrations of a new database: quiet
    // tries before the failure is worth a warning.
    let failure = await this.attempt();
    if (!failure) return;
    void (async () => {
      for (let attempt = 2; failure && !this.stopping; attempt++) {
        const migrating = (failure as { code?: string }).code === UNDEFINED_TABLE;
        if (attempt > (migrating ? MIGRATION_WAIT_TRIES : START_PASS_TRIES)) return this.failed(failure, false);
        this.failed(failure, true);
        await new Promise((resolve) => setTimeout(resolve, START_PASS_RETRY_MS).unref());
        if (this.stopping) return;
        failure = await this.attempt();
      }
    })();
  }

  onModuleDestroy(): void {
    this.stopping = true;
  }

  /**
   * Every queued job enqueued again when the engine lost its data (LostJobRecovery); queued jobs overdue
   * by FORWARD_JOB_OVERDUE enqueued again (their BullMQ job was lost otherwise: an enqueue failed after
   * the row's commit), and running ones whose lease lapsed (their worker died, and the BullMQ job may
   * have gone with Redis's data); sealed answers erased ANSWER_GRACE_SECONDS after the merchant had
   * them, or FORWARD_JOB_ANSWER_RETENTION after the end, and callbacks purged; pending callback
   * deliveries overdue for their attempt enqueued again. Every statement is idempotent, so passes of several workers at
   * once do no harm, and an attempt enqueued twice runs once: one BullMQ job (its id) while BullMQ
   * keeps it, and one claim in any case.
   * One pass; true when it went through. `quiet`: a failure is logged at debug only (it will be tried again).
   */
  async pass(quiet = false): Promise<boolean> {
    const failure = await this.attempt();
    // Tables not there yet: the migrations of a new database still run (start() waits for them, and warns).
    if (failure) this.failed(failure, quiet || (failure as { code?: string }).code === UNDEFINED_TABLE);
    return failure === null;
  }

  private failed(error: Error, quiet: boolean): void {
    const entry = { msg: 'queued forward housekeeping failed; tried again at its next run', error: error.message };
    if (quiet) this.logger.debug(entry);
    else this.logger.warn(entry);
  }

  /** One pass; the error it failed with, or null. */
  private async attempt(): Promise<Error | null> {
    try {
      await this.lostJobs.recover();
      const stranded = await this.store.stranded(this.config.forwardJobOverdueSeconds, SWEEP_BATCH);
      // BullMQ may keep the job as failed (it gave up on it): replaced, or the add would be a no-op.
      for (const { id, attempt, attempts } of stranded)
        await this.queue.enqueue(id, { attempt, attempts, replaceFailed: true });
      if (stranded.length > 0)
        this.logger.warn({
          msg: 'queued forwards overdue for their attempt, or running with a lapsed lease, were enqueued again',
          count: stranded.length,
        });
      const callbacks = await this.callbacks.sweep();
      if (callbacks > 0)
        this.logger.warn({
          msg: 'job-end callbacks overdue for their attempt were enqueued again',
          count: callbacks,
        });
      const purged =
        (await this.store.purge(answerRetentionSeconds(this.config), ANSWER_GRACE_SECONDS)) +
        (await this.callbacks.purgeEnded());
      if (purged > 0)
        this.logger.log({
          msg: 'purged the sealed plans, responses and callbacks of ended queued forwards',
          count: purged,
        });
      return null;
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }
}

/** The most an answer is kept after its job ended: FORWARD_JOB_ANSWER_RETENTION, never past FORWARD_JOB_RETENTION. */
export function answerRetentionSeconds(config: AppConfig): number {
  return Math.min(config.forwardJobAnswerRetentionSeconds, config.forwardJobRetentionSeconds);
}
