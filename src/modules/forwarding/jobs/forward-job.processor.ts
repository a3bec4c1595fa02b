import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { isDatabaseUnavailable } from '../../../platform/problem/database-errors';
import { untilDatabaseTakes } from '../../../platform/database/held-writes';
import { ProblemException } from '../../../platform/problem/problem';
import { CallbackDeliveries } from '../callbacks/callback-deliveries';
import { ForwardExecutor, isRetryable, reachedDownstream } from '../request/forward-executor';
import { keptDecodedAnswer } from '../record-bodies/decoded-bodies';
import type { ForwardPlan } from '../request/forward-plan';
import { ForwardJobData, ForwardQueue, FORWARD_JOB_NAME } from '../../../platform/job-queue/forward-queue';
import type { EngineWorker } from '../../../platform/job-queue/engine';
import { consumerOptions, QueueConsumers } from '../../../platform/job-queue/queue-consumers';
import { VAULT_FORWARD_QUEUE } from '../../../platform/redis/queues';
import { VaultKeyUnavailableError } from '../../vault/vault.errors';
import { ENDED_STATUSES, ForwardJob, JobAttempt } from './rows/forward-job.entity';
import { ForwardJobsRepository, StoredResponse } from './forward-jobs.repository';
import { isoMicros } from './attempts/job-clock';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { readWhole, retryAfterOf } from './attempts/job-answer';
import { JobOwnedElsewhereError, LeaseWatch, remember } from './lease-watch';
import { ForwardJobHousekeeping, HOUSEKEEPING_JOB } from './forward-job-housekeeping';
import { AttemptOutcome, mayRetry } from './attempts/retry-policy';
import { backoffMs, PutOff, RetryAttempt } from '../../../platform/job-queue/backoff';
import { JobConsumer } from '../../../platform/job-queue/job-consumer';
import { putOffOrKeyStore } from '../callbacks/callback-jobs';

/** A delivery that met the row mid-change looks again this much later (a put-off, no try). */
const RACE_PUT_OFF_MS = 250;
/**
 * Runs queued forwards in a worker: one BullMQ job per forward for its whole life (its id the forward's),
 * carrying only the job's id, whose tries are the forward's attempts: an attempt to be retried throws
 * RetryAttempt with its backoff, which BullMQ counts and delays the next try by (docs/decisions/0124).
 * The job's row is the truth: an attempt is written (without outcome) before it is sent, conditional on
 * BullMQ's attempt number, so a worker killed mid-attempt leaves a trace the next delivery of that
 * same attempt finds unfinished. The row's lease, not BullMQ's lock,
 * says who owns a running attempt: a delivery of a job whose lease another worker renews waits for it;
 * only a lease that stayed lapsed for a whole lease period closes the attempt as `outcome-unknown`, and
 * every transition of the row is conditional on the attempt that owns it (docs/decisions/0120).
 * The forward queue's WorkerHost (its queue's plumbing in a JobConsumer), which also runs the
 * housekeeping scheduler's jobs (for both queues' rows); job-end callbacks have their own
 * (CallbackDeliveryProcessor).
 */
@Injectable()
@Processor(VAULT_FORWARD_QUEUE)
export class ForwardJobProcessor extends WorkerHost<EngineWorker> {
  private readonly logger = new Logger('ForwardJobs');
  private readonly consumer: JobConsumer;
  /** Jobs this worker is running (id → its attempt's request_id), whose leases it renews every half lease (QUEUE_LOCK_DURATION_MS). */
  private readonly running = new Map<string, string>();
  private leaseTimer: NodeJS.Timeout | null = null;
  /**
   * Attempts whose claim failed with the database unreachable, by BullMQ job id: the statement may have
   * committed with its answer lost. The next delivery claims with the same entry, so if the row
   * already has it, it knows the claim was its own (nothing sent) instead of closing it as outcome-unknown,
   * which refuses a POST without Idempotency-Key a second try. Bounded; a delivery to another worker
   * falls back to outcome-unknown.
   */
  private readonly uncertainClaims = new Map<string, JobAttempt>();
  /** Whether another worker's running attempt still owns its job (the row's lease). */
  private readonly leases: LeaseWatch;
  /** Set on shutdown: an attempt's end stops waiting for the database (its lease then lets another worker close it). */
  private closing = false;

  constructor(
    private readonly store: ForwardJobsRepository,
    private readonly executor: ForwardExecutor,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly callbacks: CallbackDeliveries,
    private readonly housekeeping: ForwardJobHousekeeping,
    @Inject(ForwardQueue) queue: ForwardQueue,
    /** Absent with QUEUE_BACKEND=none (no BullModule): nothing to consume. */
    @Optional() @Inject(QueueConsumers) consumers?: QueueConsumers,
  ) {
    super();
    this.leases = new LeaseWatch(store, config.queueLockMs, clock);
    this.consumer = new JobConsumer(this, queue, consumers, consumerOptions(config), {
      consuming: async () => {
        this.leaseTimer = setInterval(() => void this.renewLeases(), Math.max(250, config.queueLockMs / 2));
        await this.housekeeping.start('the worker started');
      },
      // The engine may have come back empty (Redis restarted without persistence): its scheduler and its
      // waiting jobs with it. The scheduler is put back and the job rows, the truth, swept now.
      reconnected: () => void this.housekeeping.start('the job queue reconnected'),
      // SIGTERM: an attempt's end stops waiting for the database (its lease then lets another worker close it).
      stopping: () => (this.closing = true),
      stopped: () => this.leaseTimer && clearInterval(this.leaseTimer),
    });
  }

  /**
   * A forward's try, or a scheduler's job (the housekeeping).
   * The key store away is no try either: the attempt was given back before anything was sent
   * (giveBack), and the job is put off, as for a database outage (putOffOrKeyStore).
   */
  async process(job: Job<ForwardJobData>, token?: string): Promise<void> {
    if (job.name === HOUSEKEEPING_JOB) await this.housekeeping.pass();
    if (job.name !== FORWARD_JOB_NAME) return;
    await this.consumer.run(job, token, (data) => this.handle(data), putOffOrKeyStore);
  }

  private async renewLeases(): Promise<void> {
    if (this.running.size === 0) return;
    try {
      const lost = await this.store.renewLeases(this.running);
      if (lost.length > 0)
        this.logger.warn({
          msg: 'running queued forwards no longer own their jobs (ended, or taken over after their lease lapsed)',
          count: lost.length,
        });
    } catch (error) {
      // Renewed at the next tick once the database answers; no other worker takes the job before
      // its lease has stayed lapsed a whole lease period.
      this.logger.warn({
        msg: 'could not renew the leases of running queued forwards',
        error: (error as Error).message,
      });
    }
  }

  /**
   * Attempt `attempt` of a job (BullMQ's count: its job's first attempt plus its tries made). The claim
   * takes it only while the row waits for exactly that attempt, so a second delivery of an attempt
   * (stalled-job recovery, a put-off meeting a job that moved on) never runs it again: it reads the row
   * and does what the row says.
   */
  async handle({ jobId, attempt }: ForwardJobData): Promise<void> {
    // The usual case in one statement: the job waits for exactly this attempt; take it with its plan.
    const key = `${jobId}.${attempt}`;
    const uncertain = this.uncertainClaims.get(key);
    const entry = uncertain
      ? { ...uncertain, started_at: isoMicros(this.clock.epochMs()) }
      : newAttempt(attempt, this.clock.epochMs());
    let claimed;
    try {
      claimed = await this.claim(jobId, entry);
    } catch (error) {
      // The connection went with the statement: it may have committed. Kept, so the next delivery can tell.
      if (isDatabaseUnavailable(error)) remember(this.uncertainClaims, key, entry);
      throw error;
    }
    this.uncertainClaims.delete(key);
    if (claimed) return this.run(claimed.job, entry, claimed.plan);

    const job = await this.store.find(jobId);
    if (!job) return;
    if (ENDED_STATUSES.includes(job.status)) {
      // Run again after the end was committed (e.g. scheduling the callback failed): schedule it again (same webhook-id, delivered once).
      if (job.callbackUrl) await this.callbacks.schedule(job.id);
      return;
    }
    const done = job.attempts.length;
    if (job.status === 'running') return this.runningElsewhere(job, entry);
    if (attempt <= done) {
      // The attempt is recorded, but its worker went before BullMQ counted it: counted now, the next due when the row says.
      throw new RetryAttempt(this.untilDue(job));
    }
    // BullMQ counted a try the row never recorded (a handler's error): the row's next attempt runs, once due.
    const dueInMs = this.untilDue(job);
    if (dueInMs > 0) throw new PutOff(dueInMs);
    const next = newAttempt(done + 1, this.clock.epochMs());
    const retaken = await this.claim(jobId, next);
    if (retaken) return this.run(retaken.job, next, retaken.plan);
    throw new PutOff(RACE_PUT_OFF_MS);
  }

  /**
   * A delivery that finds its job running: this worker's own claim whose answer was lost (run now, nothing
   * was sent), this worker's own run (its end decides), or another worker's attempt, waited for while its
   * lease says it lives and closed as outcome-unknown only once its owner is gone.
   */
  private async runningElsewhere(job: ForwardJob, entry: JobAttempt): Promise<void> {
    const last = job.attempts[job.attempts.length - 1];
    if (!last || last.duration_ms !== null) throw new PutOff(RACE_PUT_OFF_MS);
    // This worker runs it (its BullMQ lock lapsed while the lock's store was away, say): its run's end decides.
    if (this.running.has(job.id)) throw new JobOwnedElsewhereError(this.config.queueLockMs);
    // Our own claim of an earlier delivery, committed though its answer was lost: nothing was sent yet.
    if (last.request_id === entry.request_id)
      return this.run(job, last, await this.untilGivenBack(job.id, last, () => this.store.openPlan(job)));
    const waitMs = await this.leases.ownerGoneIn(job.id, last.request_id);
    // The attempt ended or moved on meanwhile: this delivery looks at the row again.
    if (waitMs === null) throw new PutOff(RACE_PUT_OFF_MS);
    if (waitMs > 0) throw new JobOwnedElsewhereError(waitMs);
    this.logger.warn({
      msg: 'a queued forward attempt whose worker is gone has an unknown outcome; the job goes on by the retry rules',
      job: { id: job.id, attempt: last.number },
    });
    await this.conclude(job, last, { kind: 'error', retryable: true, reached: true }, null, 'outcome-unknown');
  }

  /** Milliseconds until a queued job's next attempt is due (0 when it is). */
  private untilDue(job: ForwardJob): number {
    if (!job.nextAttemptAt) return 0;
    return Math.max(0, Number(job.nextAttemptAt.toEpochMicros() / 1000n) - this.clock.epochMs());
  }

  /** The store's claim; a plan the key store cannot open now gives the attempt back (untilGivenBack). */
  private claim(jobId: string, entry: JobAttempt): ReturnType<ForwardJobsRepository['claim']> {
    return this.untilGivenBack(jobId, entry, () => this.store.claim(jobId, entry));
  }

  /** `step`; when it finds the key store away (VaultKeyUnavailableError), the attempt is given back first. */
  private async untilGivenBack<T>(jobId: string, entry: JobAttempt, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof VaultKeyUnavailableError) await this.giveBack(jobId, entry);
      throw error;
    }
  }

  /**
   * An attempt that the key store's outage stopped before anything was sent (its plan or its cards
   * did not open): removed from the row, which waits queued for the same attempt again, so an HSM
   * outage of any length delays the job without using up its attempts. BullMQ then puts this attempt's
   * job off (putOffOrKeyStore). Only this attempt is taken back: the row must still be running it.
   */
  private async giveBack(jobId: string, entry: JobAttempt): Promise<void> {
    await this.untilDatabaseAnswers(async () => {
      const job = await this.store.find(jobId);
      if (job?.status !== 'running' || job.attempts.length !== entry.number) return;
      await this.store.requeue(
        { id: jobId, attempts: job.attempts.slice(0, -1) },
        entry.request_id,
        isoMicros(this.clock.epochMs()),
      );
    });
  }

  private async run(job: ForwardJob, entry: JobAttempt, plan: ForwardPlan | null): Promise<void> {
    this.running.set(job.id, entry.request_id);
    try {
      await this.attempt(job, entry, plan);
    } finally {
      this.running.delete(job.id);
    }
  }

  private async attempt(job: ForwardJob, entry: JobAttempt, plan: ForwardPlan | null): Promise<void> {
    if (!plan)
      return this.conclude(job, entry, { kind: 'error', retryable: false, reached: false }, null, 'plan-missing');
    // The caller's key goes downstream, so the target can tell a retry from a new request: in the sealed
    // plan (ForwardJobsService), or, for a job queued before keys were hashed, in the row until it ends.
    const sent =
      job.legacyIdempotencyKey &&
      !plan.headerTemplates.some(([name]) => name === 'idempotency-key') &&
      !plan.passedHeaders.some(([name]) => name === 'idempotency-key')
        ? { ...plan, passedHeaders: [...plan.passedHeaders, ['idempotency-key', job.legacyIdempotencyKey] as const] }
        : plan;
    let outcome: AttemptOutcome;
    let stored: StoredResponse | null = null;
    let errorType: string | null = null;
    try {
      const response = await this.executor.execute(sent, { recordId: entry.request_id, putOff: keyStoreAway });
      // Kept for FORWARD_JOB_RETENTION: what a record may keep of it, no more (decision 0113), decoded (0137).
      const whole = { headers: response.headers, body: await readWhole(response.body) };
      const kept = await keptDecodedAnswer(whole, response.withheld);
      stored = { status: response.status, headers: kept.headers, body_base64: kept.body.toString('base64') };
      outcome = {
        kind: 'response',
        status: response.status,
        retryAfterMs: retryAfterOf(response, this.clock.epochMs()),
      };
    } catch (error) {
      // Nothing left (the cards did not open): not a try, nor a forward on record; the job waits for the key store.
      if (keyStoreAway(error)) {
        await this.giveBack(job.id, entry);
        throw error;
      }
      errorType = error instanceof ProblemException ? error.definition.code : 'internal-error';
      if (!(error instanceof ProblemException))
        this.logger.warn({
          msg: 'queued forward attempt failed',
          job: { id: job.id, attempt: entry.number },
          error: (error as Error).message,
        });
      outcome = { kind: 'error', retryable: isRetryable(error), reached: reachedDownstream(error) };
    }
    await this.conclude(job, entry, outcome, stored, errorType);
  }

  /**
   * Records the attempt's outcome and what follows: the end, or the next attempt (the row queued, due at
   * next_attempt_at, and RetryAttempt thrown with the same delay, so BullMQ schedules that attempt).
   */
  private async conclude(
    job: ForwardJob,
    entry: JobAttempt,
    outcome: AttemptOutcome,
    stored: StoredResponse | null,
    errorType: string | null,
  ): Promise<void> {
    const nowMs = this.clock.epochMs();
    entry.duration_ms = Math.max(0, Math.round((nowMs - Date.parse(entry.started_at)) * 1000) / 1000);
    entry.status = outcome.kind === 'response' ? outcome.status : null;
    entry.error_type = errorType;
    // The row's attempts end with this one (claimed, or the last of a job whose worker was lost).
    job.attempts[entry.number - 1] = entry;
    const succeeded = outcome.kind === 'response' && outcome.status < 400;
    const keyed = job.idempotencyKey !== null || job.legacyIdempotencyKey !== null;
    const retry = !succeeded && entry.number < job.maxAttempts && mayRetry(outcome, job.method, keyed);
    if (retry) {
      const delayMs = backoffMs(
        entry.number,
        this.config.forwardRetryBaseMs,
        outcome.kind === 'response' ? outcome.retryAfterMs : null,
      );
      entry.next_attempt_at = isoMicros(nowMs + delayMs);
      const requeued = await this.untilDatabaseAnswers(() =>
        this.store.requeue(job, entry.request_id, entry.next_attempt_at!),
      );
      if (!requeued && !(await this.alreadyRecorded(job.id, entry))) return this.superseded(job, entry, errorType);
      throw new RetryAttempt(Math.max(0, nowMs + delayMs - this.clock.epochMs()));
    }
    const ended = await this.untilDatabaseAnswers(() =>
      this.store.finish(job, entry.request_id, succeeded ? 'succeeded' : 'failed', stored),
    );
    if (!ended && !(await this.alreadyRecorded(job.id, entry))) return this.superseded(job, entry, errorType);
    // The callback (src/modules/forwarding/callbacks/): its delivery row stored, its attempt enqueued. A failure here
    // throws, so BullMQ runs this handler again, which finds the job ended and schedules once more.
    if (job.callbackUrl) await this.callbacks.schedule(job.id);
  }

  /**
   * An attempt's end (requeue, finish) held until the database takes it (platform/database/held-writes.ts):
   * the downstream has answered, and throwing it away would have the attempt closed as outcome-unknown
   * and sent again. The same while the key store is away (finish seals the answer under a new data
   * key). The job holds its worker slot meanwhile; nothing else could run without the database anyway.
   */
  private untilDatabaseAnswers<T>(write: () => Promise<T>): Promise<T> {
    return untilDatabaseTakes(write, {
      alsoWhen: (error) => error instanceof VaultKeyUnavailableError,
      stopped: () => this.closing,
    });
  }

  /**
   * Whether the row already holds this very outcome of the attempt as its last: the transition
   * committed on an earlier try whose answer the database outage took (untilDatabaseAnswers).
   */
  private async alreadyRecorded(jobId: string, entry: JobAttempt): Promise<boolean> {
    const job = await this.untilDatabaseAnswers(() => this.store.find(jobId));
    const last = job?.attempts[job.attempts.length - 1];
    return (
      last?.request_id === entry.request_id &&
      last.duration_ms === entry.duration_ms &&
      last.status === entry.status &&
      last.error_type === entry.error_type
    );
  }

  /**
   * The attempt no longer owns its job (another worker took it over after its lease lapsed, or it
   * ended): its outcome goes to its own entry in the history, the job's state, answer and callback stay
   * as the owning attempt left them. A worker taking over records nothing here: its outcome-unknown
   * never replaces what the attempt itself reported.
   */
  private async superseded(job: ForwardJob, entry: JobAttempt, errorType: string | null): Promise<void> {
    if (errorType === 'outcome-unknown') return;
    this.logger.warn({
      msg: 'a queued forward attempt ended after another took its job over; its outcome is kept in its own attempt only',
      job: { id: job.id, attempt: entry.number },
    });
    await this.untilDatabaseAnswers(() => this.store.recordLateOutcome(job.id, entry));
  }
}

/** The key store away before anything of the attempt was sent: put off, not tried. */
function keyStoreAway(error: unknown): boolean {
  return error instanceof VaultKeyUnavailableError && !reachedDownstream(error);
}

function newAttempt(number: number, startedAtMs: number): JobAttempt {
  return {
    number,
    request_id: randomUUID(),
    started_at: isoMicros(startedAtMs),
    duration_ms: null,
    status: null,
    error_type: null,
    next_attempt_at: null,
  };
}
