import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { boundAad, SecretSealer } from '../../vault/secret-sealer';
import { deserializePlan, ForwardPlan, serializePlan } from '../request/forward-plan';
import { Sql } from '../../../platform/database/sql';
import { StatementBatcher } from '../../../platform/database/statement-batcher';
import { Condition, KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import { IdempotencyClaimLostError } from '../idempotency/idempotency.service';
import { ForwardJob, JobAttempt, JobStatus } from './rows/forward-job.entity';
import {
  ClaimedRow,
  ClaimItem,
  jobOf,
  JobRow,
  SealedRow,
  sealedRecord,
  transpose,
  JOB_COLUMNS,
  CREATE,
  CLAIM,
  FINISH,
  CREATE_MANY,
  CLAIM_MANY,
  FINISH_MANY,
  REQUEUE,
  RECORD_LATE,
  QUEUE_STATES,
} from './rows/forward-job-statements';
import type { QueueState } from '../../../platform/metrics/queue-metrics';

/** A finished job's answer as stored (sealed) and shown. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body_base64: string;
}

interface NewJob {
  id: string;
  merchantAccountId: string;
  method: string;
  targetUrl: string;
  paymentMethodIds: readonly string[];
  authenticationIds: readonly string[];
  maxAttempts: number;
  /** The Idempotency-Key's keyed hash (the key itself travels in the sealed plan). */
  idempotencyKeyHash: string | null;
  callbackUrl: string | null;
}

const planAad = (merchantAccountId: string, jobId: string) => boundAad('forward-job-plan', merchantAccountId, jobId);
const responseAad = (merchantAccountId: string, jobId: string) =>
  boundAad('forward-job-response', merchantAccountId, jobId);

/**
 * Job rows and their sealed parts. The plan (literal CVVs, forwarded header values) and the response
 * are sealed before they reach PostgreSQL, each bound to its merchant and job (a blob moved to another
 * row does not open), and rotate with `vault rotate-keys` (SEALED_TABLES). The queued path's steps
 * (create, claim, finish, requeue) are one prepared statement each on Sql, with no TypeORM (the
 * round trips were most of a job's CPU, docs/benchmarks-history.md); the resource's reads use the repository.
 */
@Injectable()
export class ForwardJobsRepository {
  private readonly keyset: KeysetTable<ForwardJob>;

  /**
   * Under load the hot statements are batched (group commit): the creates of concurrent requests in
   * one statement, the claims and ends of a worker's concurrent jobs likewise.
   */
  /** A create whose idempotency claim no longer holds its key gives no row (undefined). */
  private readonly creates: StatementBatcher<unknown[], JobRow | undefined>;
  private readonly claims: StatementBatcher<ClaimItem, ClaimedRow | null>;
  /** Whether the job ended (false: its attempt did not own it any more). */
  private readonly finishes: StatementBatcher<unknown[], boolean>;

  /** How long a claimed job's lease lasts unrenewed: the queue's lock duration (renewLeases). */
  private readonly leaseMs: number;

  constructor(
    @InjectRepository(ForwardJob) private readonly jobs: Repository<ForwardJob>,
    private readonly dataSource: DataSource,
    private readonly sql: Sql,
    private readonly sealer: SecretSealer,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.leaseMs = config.queueLockMs;
    this.keyset = new KeysetTable(sql, jobs.metadata, 'j');
    this.creates = new StatementBatcher<unknown[], JobRow | undefined>({
      one: async (values) => (await this.sql.prepared<JobRow>('forward-jobs.create', CREATE, values))[0],
      many: async (items) => {
        const rows = await this.sql.prepared<JobRow>('forward-jobs.create-many', CREATE_MANY, transpose(items, [4, 5]));
        const byId = new Map(rows.map((row) => [row.id, row]));
        return items.map((values) => byId.get(values[0] as string));
      },
    });
    this.claims = new StatementBatcher<ClaimItem, ClaimedRow | null>({
      one: async (item) =>
        (
          await this.sql.prepared<ClaimedRow>('forward-jobs.claim', CLAIM, [
            item.jobId,
            item.entry,
            item.done,
            this.leaseMs,
          ])
        )[0] ?? null,
      many: async (items) => {
        const rows = await this.sql.prepared<ClaimedRow>('forward-jobs.claim-many', CLAIM_MANY, [
          items.map((item) => item.jobId),
          items.map((item) => item.entry),
          items.map((item) => item.done),
          this.leaseMs,
        ]);
        const byAttempt = new Map(rows.map((row) => [row.attempts[row.attempts.length - 1]?.request_id, row]));
        return items.map((item) => byAttempt.get(item.requestId) ?? null);
      },
    });
    this.finishes = new StatementBatcher<unknown[], boolean>({
      one: async (values) => (await this.sql.prepared('forward-jobs.finish', FINISH, values)).length > 0,
      many: async (items) => {
        const rows = await this.sql.prepared<{ id: string }>(
          'forward-jobs.finish-many',
          FINISH_MANY,
          transpose(items, []),
        );
        const ended = new Set(rows.map((row) => row.id));
        return items.map((values) => ended.has(values[0] as string));
      },
    });
  }

  /**
   * The row and its sealed plan, in one statement; with `idempotencyClaimId`, that claim (still
   * running) is marked done with this job in the same statement.
   */
  async create(job: NewJob, plan: ForwardPlan, idempotencyClaimId: string | null = null): Promise<ForwardJob> {
    const text = Buffer.from(serializePlan(plan), 'utf8');
    let sealed;
    try {
      sealed = this.sealer.seal(planAad(job.merchantAccountId, job.id), text);
    } finally {
      text.fill(0);
    }
    const row = await this.creates.run([
      job.id,
      job.merchantAccountId,
      job.method,
      job.targetUrl,
      job.paymentMethodIds,
      job.authenticationIds,
      job.maxAttempts,
      job.idempotencyKeyHash,
      job.callbackUrl,
      sealed.ciphertext,
      sealed.wrappedKey,
      sealed.masterKeyId,
      idempotencyClaimId,
    ]);
    if (!row) throw new IdempotencyClaimLostError();
    return jobOf(row);
  }

  /** A job that could not be enqueued: it never existed for the caller (503). */
  async discard(jobId: string): Promise<void> {
    await this.sql.prepared('forward-jobs.discard', `DELETE FROM vault_forward_jobs WHERE id = $1`, [jobId]);
  }

  /**
   * Claims attempt `entry.number` of a queued job (see CLAIM): the row as it now is and its opened
   * plan (null when it is gone), or null when the job is not waiting for that attempt.
   */
  async claim(jobId: string, entry: JobAttempt): Promise<{ job: ForwardJob; plan: ForwardPlan | null } | null> {
    const row = await this.claims.run({
      jobId,
      entry: JSON.stringify([entry]),
      done: entry.number - 1,
      requestId: entry.request_id,
    });
    if (!row) return null;
    const job = jobOf(row);
    return { job, plan: row.ciphertext ? this.openSealedPlan(job, row as SealedRow) : null };
  }

  /**
   * Extends the leases of the running attempts a worker holds (job id → attempt's request_id), also a
   * lease that lapsed while the database was away, as long as the attempt still owns its job. Returns
   * the jobs whose attempt does not own them any more (ended, or superseded by another worker).
   */
  async renewLeases(attempts: ReadonlyMap<string, string>): Promise<string[]> {
    const ids = [...attempts.keys()];
    const rows = await this.sql.prepared<{ id: string }>(
      'forward-jobs.renew-leases',
      `UPDATE vault_forward_jobs j SET lease_expires_at = now() + make_interval(secs => $3::int / 1000.0)
         FROM unnest($1::uuid[], $2::text[]) AS i(id, request_id)
        WHERE j.id = i.id AND j.status = 'running' AND j.attempts -> -1 ->> 'request_id' = i.request_id
        RETURNING j.id`,
      [ids, ids.map((id) => attempts.get(id)), this.leaseMs],
    );
    const renewed = new Set(rows.map((row) => row.id));
    return ids.filter((id) => !renewed.has(id));
  }

  /**
   * The lease of attempt `requestId` while it owns its running job: its expiry as stored (compared as
   * is: the same text means nobody renewed it) and how long it still runs by the database's clock (0
   * once lapsed). Null when the job is not running that attempt any more.
   */
  async leaseOf(jobId: string, requestId: string): Promise<{ expiresAt: string; remainingMs: number } | null> {
    const [row] = await this.sql.prepared<{ expires_at: string | null; remaining_ms: number | null }>(
      'forward-jobs.lease-of',
      `SELECT lease_expires_at::text AS expires_at,
              greatest(0, ceil(extract(epoch FROM lease_expires_at - now()) * 1000))::float8 AS remaining_ms
         FROM vault_forward_jobs WHERE id = $1 AND status = 'running' AND attempts -> -1 ->> 'request_id' = $2::text`,
      [jobId, requestId],
    );
    if (!row) return null;
    return { expiresAt: row.expires_at ?? 'none', remainingMs: Number(row.remaining_ms ?? 0) };
  }

  /**
   * Jobs whose BullMQ job may be gone, with the attempt its BullMQ job starts at and the attempts left
   * from there: queued ones overdue by `overdueSeconds` (the next attempt), and running ones whose lease
   * lapsed (the running attempt, whose next delivery closes it as outcome-unknown once its owner is surely gone).
   */
  async stranded(
    overdueSeconds: number,
    limit: number,
  ): Promise<Array<{ id: string; attempt: number; attempts: number }>> {
    const rows = await this.sql.prepared<{ id: string; attempt: number; max_attempts: number }>(
      'forward-jobs.stranded',
      `(SELECT id, jsonb_array_length(attempts) + 1 AS attempt, max_attempts FROM vault_forward_jobs
         WHERE status = 'queued' AND COALESCE(next_attempt_at, created_at) < now() - make_interval(secs => $1) LIMIT $2)
       UNION ALL
       (SELECT id, jsonb_array_length(attempts) AS attempt, max_attempts FROM vault_forward_jobs
         WHERE status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at < now()) LIMIT $2)`,
      [overdueSeconds, limit],
    );
    return rows.map((row) => ({ id: row.id, ...attemptsFrom(Number(row.attempt), Number(row.max_attempts)) }));
  }

  /**
   * Queued jobs after `afterId` in id order (from the first with null), whatever their due time, with the
   * attempt their BullMQ job starts at, the attempts left and how long until it is due (0 when due).
   * Through a partial index of queued ids, so a walk costs the backlog's size, not the table's.
   */
  async queuedAfter(
    afterId: string | null,
    limit: number,
  ): Promise<Array<{ id: string; attempt: number; attempts: number; delayMs: number }>> {
    const rows = await this.sql.prepared<{ id: string; attempt: number; max_attempts: number; delay_ms: string }>(
      'forward-jobs.queued-after',
      `SELECT id, jsonb_array_length(attempts) + 1 AS attempt, max_attempts,
              GREATEST(0, ceil(extract(epoch FROM next_attempt_at - now()) * 1000))::bigint AS delay_ms
         FROM vault_forward_jobs
        WHERE status = 'queued' AND id > COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000'::uuid)
        ORDER BY id LIMIT $2`,
      [afterId, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      ...attemptsFrom(Number(row.attempt), Number(row.max_attempts)),
      delayMs: Number(row.delay_ms),
    }));
  }

  /** The jobs not ended, by queue state (see QUEUE_STATES), for the queue gauges. */
  queueStates(): Promise<QueueState[]> {
    return this.sql.prepared<QueueState>('forward-jobs.queue-states', QUEUE_STATES, []);
  }

  /** A job as the resource shows it (TypeORM's entity), of that merchant unless null; null when there is none. */
  findOf(merchantAccountId: string | null, id: string): Promise<ForwardJob | null> {
    return this.jobs.findOneBy(merchantAccountId === null ? { id } : { id, merchantAccountId });
  }

  /** One page of a merchant's jobs (of `status`, if given), as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  page(merchantAccountId: string, status: JobStatus | undefined, keyset: KeysetRequest): Promise<ForwardJob[]> {
    const conditions: Condition[] = [where('j.merchant_account_id = ?', merchantAccountId)];
    if (status) conditions.push(where('j.status = ?', status));
    return this.keyset.seekPage(conditions, keyset);
  }

  /** Cancels a merchant's job while it waits for an attempt, its sealed plan deleted with it: whether it did. */
  async cancel(merchantAccountId: string, id: string): Promise<boolean> {
    const [rows] = await this.jobs.query<[unknown[], number]>(
      `WITH cancelled AS (
         UPDATE vault_forward_jobs SET status = 'cancelled', next_attempt_at = NULL, updated_at = now(), finished_at = now(),
                legacy_idempotency_key = NULL
          WHERE id = $1 AND merchant_account_id = $2 AND status = 'queued' RETURNING id)
       DELETE FROM vault_forward_job_plans WHERE job_id IN (SELECT id FROM cancelled) RETURNING job_id`,
      [id, merchantAccountId],
    );
    return rows.length > 0;
  }

  /** The row, or null. */
  async find(jobId: string): Promise<ForwardJob | null> {
    const [row] = await this.sql.prepared<JobRow>(
      'forward-jobs.find',
      `SELECT ${JOB_COLUMNS} FROM vault_forward_jobs WHERE id = $1`,
      [jobId],
    );
    return row ? jobOf(row) : null;
  }

  /**
   * Ends a job (see FINISH) while attempt `owner` (a request_id) owns it; the response is sealed here.
   * False when that attempt does not own the job any more: nothing changed.
   */
  async finish(
    job: Pick<ForwardJob, 'id' | 'merchantAccountId' | 'attempts'>,
    owner: string,
    status: JobStatus,
    response: StoredResponse | null,
  ): Promise<boolean> {
    const sealed = response ? this.sealer.sealJson(responseAad(job.merchantAccountId, job.id), response) : null;
    return this.finishes.run([
      job.id,
      job.merchantAccountId,
      status,
      JSON.stringify(job.attempts),
      response?.status ?? null,
      sealed?.ciphertext ?? null,
      sealed?.wrappedKey ?? null,
      sealed?.masterKeyId ?? null,
      owner,
    ]);
  }

  /**
   * Back to queued after a retried attempt, due at `nextAttemptAt` (ISO, µs), while attempt `owner`
   * owns the job (see REQUEUE). False when it does not any more: nothing changed.
   */
  async requeue(job: Pick<ForwardJob, 'id' | 'attempts'>, owner: string, nextAttemptAt: string): Promise<boolean> {
    const rows = await this.sql.prepared('forward-jobs.requeue', REQUEUE, [
      job.id,
      JSON.stringify(job.attempts),
      nextAttemptAt,
      owner,
    ]);
    return rows.length > 0;
  }

  /** Keeps the outcome of an attempt that no longer owns its job in its history entry (see RECORD_LATE). */
  async recordLateOutcome(jobId: string, entry: JobAttempt): Promise<boolean> {
    const rows = await this.sql.prepared('forward-jobs.record-late', RECORD_LATE, [
      jobId,
      entry.number - 1,
      JSON.stringify(entry),
      entry.request_id,
    ]);
    return rows.length > 0;
  }

  /** The job's plan, or null once it is gone (the job ended). */
  async openPlan(
    job: Pick<ForwardJob, 'id' | 'merchantAccountId'>,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ForwardPlan | null> {
    const rows = await manager.query<SealedRow[]>(
      `SELECT ciphertext, wrapped_key, master_key_id FROM vault_forward_job_plans WHERE job_id = $1`,
      [job.id],
    );
    if (rows.length === 0) return null;
    return this.openSealedPlan(job, rows[0]);
  }

  private openSealedPlan(job: Pick<ForwardJob, 'id' | 'merchantAccountId'>, row: SealedRow): ForwardPlan {
    const text = this.sealer.open(
      planAad(job.merchantAccountId, job.id),
      sealedRecord(row),
      `plan of queued forward ${job.id}`,
    );
    try {
      return deserializePlan(text);
    } finally {
      text.fill(0);
    }
  }

  /** The stored answer of a finished job, or null (none, or erased: `response_erased_at` says when and why). */
  async openResponse(job: Pick<ForwardJob, 'id' | 'merchantAccountId'>): Promise<StoredResponse | null> {
    const rows = await this.dataSource.query<SealedRow[]>(
      `SELECT ciphertext, wrapped_key, master_key_id FROM vault_forward_job_responses WHERE job_id = $1`,
      [job.id],
    );
    if (rows.length === 0) return null;
    return this.sealer.openJson<StoredResponse>(
      responseAad(job.merchantAccountId, job.id),
      sealedRecord(rows[0]),
      `response of queued forward ${job.id}`,
    );
  }

  /**
   * The merchant has the ended job's answer (it read the job, or its callback was delivered): the first
   * time is kept, from which the answer's grace runs (decision 0139).
   */
  async markResponseReceived(jobId: string): Promise<void> {
    await this.sql.prepared(
      'forward-jobs.response-received',
      `UPDATE vault_forward_jobs SET response_received_at = now()
        WHERE id = $1 AND finished_at IS NOT NULL AND response_received_at IS NULL`,
      [jobId],
    );
  }

  /**
   * Erases the sealed answers no one needs any more (decision 0139): `graceSeconds` after the merchant
   * first had one ('received'), and in any case `answerRetentionSeconds` after its job ended
   * ('retention'); the row keeps its status and response_status and says when and why. Deletes any plan
   * an ended job still has. Returns how many sealed rows went.
   */
  async purge(answerRetentionSeconds: number, graceSeconds: number): Promise<number> {
    const [, responses] = await this.dataSource.query<[unknown, number]>(
      `WITH due AS (
         SELECT j.id,
                CASE WHEN j.response_received_at < now() - make_interval(secs => $2) THEN 'received' ELSE 'retention' END
                  AS reason
           FROM vault_forward_jobs j JOIN vault_forward_job_responses r ON r.job_id = j.id
          WHERE j.finished_at IS NOT NULL
            AND (j.response_received_at < now() - make_interval(secs => $2)
                 OR j.finished_at < now() - make_interval(secs => $1))),
       gone AS (DELETE FROM vault_forward_job_responses r USING due WHERE r.job_id = due.id RETURNING r.job_id)
       UPDATE vault_forward_jobs j SET response_erased_at = now(), response_erased_reason = due.reason
         FROM due JOIN gone ON gone.job_id = due.id WHERE j.id = due.id`,
      [answerRetentionSeconds, graceSeconds],
    );
    const [, plans] = await this.dataSource.query<[unknown, number]>(
      `DELETE FROM vault_forward_job_plans p USING vault_forward_jobs j WHERE p.job_id = j.id AND j.finished_at IS NOT NULL`,
    );
    return responses + plans;
  }
}

/** A forward's BullMQ job starting at attempt `attempt`: that attempt and the tries left after it (at least one). */
export function attemptsFrom(attempt: number, maxAttempts: number): { attempt: number; attempts: number } {
  return { attempt, attempts: Math.max(1, maxAttempts - attempt + 1) };
}
