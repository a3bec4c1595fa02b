import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { ProblemException } from '../common/problem/problem';
import { CallbackDeliveries } from '../forward-callbacks/callback-deliveries';
import { ForwardExecutor, isRetryable, reachedDownstream } from '../forwarding/forward-executor';
import { ForwardingErrors } from '../forwarding/forwarding.errors';
import type { DownstreamResponse } from '../forwarding/downstream-client';
import type { ForwardPlan } from '../forwarding/forward-plan';
import { ForwardJobData, ForwardQueue } from '../job-queue/forward-queue';
import { ENDED_STATUSES, ForwardJob, JobAttempt } from './forward-job.entity';
import { ForwardJobStore, StoredResponse } from './forward-job-store';
import { epochMsNow, isoMicros } from './job-clock';
import { AttemptOutcome, backoffMs, mayRetry, parseRetryAfter } from './retry-policy';

/** The most of a downstream answer a job keeps (the same limit as the synchronous path's). */
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** How often a worker purges old responses and re-enqueues jobs whose enqueue was lost. */
const HOUSEKEEPING_INTERVAL_MS = 60_000;
/** A queued job this late for its attempt has lost its BullMQ job (an outage between our commit and the enqueue). */
const OVERDUE_SECONDS = 60;

/**
 * Runs queued forwards in a worker: one BullMQ job per attempt, carrying only the job's id and the
 * attempt number. The job's row is the truth: an attempt is written (without outcome) before it is
 * sent, so a worker killed mid-attempt leaves a trace the next one counts (stalled-job recovery runs
 * the same BullMQ job again, which finds its attempt unfinished and closes it as `worker-lost`).
 */
@Injectable()
export class ForwardJobProcessor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ForwardJobs');
  private housekeeping: NodeJS.Timeout | null = null;

  constructor(
    private readonly queue: ForwardQueue,
    private readonly store: ForwardJobStore,
    private readonly executor: ForwardExecutor,
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly callbacks: CallbackDeliveries,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.queue.backend === 'none') return;
    await this.queue.process((job) => this.handle(job), { concurrency: this.config.workerConcurrency });
    this.housekeeping = setInterval(() => void this.houseKeep(), HOUSEKEEPING_INTERVAL_MS);
    this.housekeeping.unref();
  }

  /** SIGTERM: stop taking jobs and let the running ones finish, while the database is still there. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.housekeeping) clearInterval(this.housekeeping);
    await this.queue.close();
  }

  async handle({ jobId, attempt }: ForwardJobData): Promise<void> {
    // The usual case in one statement: the job waits for exactly this attempt; take it with its plan.
    const entry = newAttempt(attempt);
    const claimed = await this.store.claim(jobId, entry);
    if (claimed) return this.run(claimed.job, entry, claimed.plan);

    const job = await this.store.find(jobId);
    if (!job) return;
    if (ENDED_STATUSES.includes(job.status)) {
      // Run again after the end was committed (e.g. scheduling the callback failed): schedule it again (same webhook-id, delivered once).
      if (job.callbackUrl) await this.callbacks.schedule(job.id);
      return;
    }
    const done = job.attempts.length;
    if (job.status === 'running') {
      const last = job.attempts[done - 1];
      // This attempt's BullMQ job again, its worker gone (stalled-job recovery): count what it did.
      if (attempt === done && last && last.duration_ms === null) await this.conclude(job, last, { kind: 'error', retryable: true, reached: true }, null, 'worker-lost');
      return;
    }
    if (attempt <= done) {
      // An attempt already recorded: its BullMQ job ran again after the next was due to be enqueued.
      if (attempt === done && job.nextAttemptAt) await this.enqueueNext(job.id, done + 1, job.nextAttemptAt.toEpochMicros());
      return;
    }
    // Queued, and this BullMQ job names a later attempt than the row's next one: run the row's next.
    const next = newAttempt(done + 1);
    const retaken = await this.store.claim(jobId, next);
    if (retaken) await this.run(retaken.job, next, retaken.plan);
  }

  private async run(job: ForwardJob, entry: JobAttempt, plan: ForwardPlan | null): Promise<void> {
    if (!plan) return this.conclude(job, entry, { kind: 'error', retryable: false, reached: false }, null, 'plan-missing');
    // The caller's key goes downstream, so the target can tell a retry from a new request.
    const sent = job.idempotencyKey && !plan.headerTemplates.some(([name]) => name === 'idempotency-key')
      ? { ...plan, passedHeaders: [...plan.passedHeaders, ['idempotency-key', job.idempotencyKey] as const] }
      : plan;
    let outcome: AttemptOutcome;
    let stored: StoredResponse | null = null;
    let errorType: string | null = null;
    try {
      const response = await this.executor.execute(sent, { recordId: entry.request_id });
      const body = await readWhole(response.body);
      stored = { status: response.status, headers: response.headers, body_base64: body.toString('base64') };
      outcome = { kind: 'response', status: response.status, retryAfterMs: retryAfterOf(response) };
    } catch (error) {
      errorType = error instanceof ProblemException ? error.definition.code : 'internal-error';
      if (!(error instanceof ProblemException)) this.logger.warn({ msg: 'queued forward attempt failed', job: { id: job.id, attempt: entry.number }, error: (error as Error).message });
      outcome = { kind: 'error', retryable: isRetryable(error), reached: reachedDownstream(error) };
    }
    await this.conclude(job, entry, outcome, stored, errorType);
  }

  /** Records the attempt's outcome and what follows: the next attempt (queued, enqueued with its delay), or the end. */
  private async conclude(job: ForwardJob, entry: JobAttempt, outcome: AttemptOutcome, stored: StoredResponse | null, errorType: string | null): Promise<void> {
    const nowMs = epochMsNow();
    entry.duration_ms = Math.max(0, Math.round((nowMs - Date.parse(entry.started_at)) * 1000) / 1000);
    entry.status = outcome.kind === 'response' ? outcome.status : null;
    entry.error_type = errorType;
    // The row's attempts end with this one (claimed, or the last of a job whose worker was lost).
    job.attempts[entry.number - 1] = entry;
    const succeeded = outcome.kind === 'response' && outcome.status < 400;
    const retry = !succeeded && entry.number < job.maxAttempts && mayRetry(outcome, job.method, job.idempotencyKey !== null);
    if (retry) {
      const delayMs = backoffMs(entry.number, this.config.forwardRetryBaseMs, outcome.kind === 'response' ? outcome.retryAfterMs : null);
      entry.next_attempt_at = isoMicros(nowMs + delayMs);
      await this.store.requeue(job, entry.next_attempt_at);
      await this.enqueueNext(job.id, entry.number + 1, BigInt(Math.round((nowMs + delayMs) * 1000)));
      return;
    }
    await this.store.finish(job, succeeded ? 'succeeded' : 'failed', stored);
    // The callback (src/forward-callbacks/): stored in the outbox and delivered by its loop. A failure here
    // throws, so BullMQ runs this handler again, which finds the job ended and schedules once more.
    if (job.callbackUrl) await this.callbacks.schedule(job.id);
  }

  private async enqueueNext(jobId: string, attempt: number, dueEpochMicros: bigint): Promise<void> {
    const delayMs = Math.max(0, Number(dueEpochMicros / 1000n) - Date.now());
    // Throws while the queue is down: BullMQ runs this handler again, which finds the attempt recorded and enqueues then.
    await this.queue.enqueue(jobId, { attempt, delayMs });
  }

  /** Old responses purged (FORWARD_JOB_RETENTION); queued jobs whose BullMQ job was lost enqueued again. */
  private async houseKeep(): Promise<void> {
    try {
      const purged = await this.store.purge(this.config.forwardJobRetentionSeconds);
      if (purged > 0) this.logger.log({ msg: 'purged the sealed plans and responses of ended queued forwards', count: purged });
      const overdue = (await this.dataSource.query(
        `SELECT id, jsonb_array_length(attempts) AS done FROM vault_forward_jobs
          WHERE status = 'queued' AND COALESCE(next_attempt_at, created_at) < now() - make_interval(secs => $1) LIMIT 1000`,
        [OVERDUE_SECONDS],
      )) as Array<{ id: string; done: number }>;
      for (const row of overdue) await this.queue.enqueue(row.id, { attempt: Number(row.done) + 1 });
    } catch (error) {
      this.logger.warn({ msg: 'queued forward housekeeping failed; tried again later', error: (error as Error).message });
    }
  }
}

function newAttempt(number: number): JobAttempt {
  return { number, request_id: randomUUID(), started_at: isoMicros(), duration_ms: null, status: null, error_type: null, next_attempt_at: null };
}

function retryAfterOf(response: DownstreamResponse): number | null {
  if (response.status !== 429 && response.status !== 503) return null;
  return parseRetryAfter(response.headers['retry-after']);
}

/** The answer whole; a stream from the downstream client already fails past 10 MiB, this is the job's own bound. */
async function readWhole(body: Buffer | Readable): Promise<Buffer> {
  if (!(body instanceof Readable)) return body;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      throw new ProblemException(ForwardingErrors.downstreamResponseTooLarge, `The target answered with more than ${MAX_RESPONSE_BYTES} bytes.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
