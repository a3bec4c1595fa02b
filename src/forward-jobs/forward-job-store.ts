import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { boundAad, SecretSealer } from '../vault/secret-sealer';
import { deserializePlan, ForwardPlan, serializePlan } from '../forwarding/forward-plan';
import { Sql } from '../database/sql';
import { StatementBatcher, textArrayLiteral } from '../common/statement-batcher';
import type { Timestamp } from '../database/timestamp';
import { IdempotencyClaimLostError } from '../idempotency/idempotency.service';
import { ForwardJob, JobAttempt, JobStatus } from './forward-job.entity';

/** A finished job's answer as stored (sealed) and shown. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body_base64: string;
}

export interface NewJob {
  id: string;
  merchantAccountId: string;
  method: string;
  targetUrl: string;
  paymentMethodIds: readonly string[];
  authenticationIds: readonly string[];
  maxAttempts: number;
  idempotencyKey: string | null;
  callbackUrl: string | null;
}

const planAad = (merchantAccountId: string, jobId: string) => boundAad('forward-job-plan', merchantAccountId, jobId);
const responseAad = (merchantAccountId: string, jobId: string) =>
  boundAad('forward-job-response', merchantAccountId, jobId);

/** The job's columns as a prepared statement returns them (ForwardJob's, under their SQL names). */
const JOB_COLUMNS = `id, merchant_account_id, status, method, target_url, payment_method_ids, authentication_ids, max_attempts,
  idempotency_key, callback_url, attempts, next_attempt_at, response_status, created_at, updated_at, finished_at`;

/**
 * The row, its sealed plan and (for an Idempotency-Key) the key's link to the job, in one statement:
 * one round trip and one commit, and a key is never left claimed without its job. With a claim, the job
 * is created only while that claim still holds the key (locked here): a claim whose request outlived
 * its lease may have been taken over by a retry, which then creates the key's one job instead.
 */
const CREATE = `WITH claim AS (
    SELECT id FROM vault_forward_idempotency_keys WHERE id = $13::uuid AND state = 'running' FOR UPDATE),
  job AS (
    INSERT INTO vault_forward_jobs
      (id, merchant_account_id, method, target_url, payment_method_ids, authentication_ids, max_attempts, idempotency_key, callback_url)
    SELECT $1::uuid, $2::text, $3::text, $4::text, $5::text[], $6::text[], $7::int, $8::text, $9::text
     WHERE $13::uuid IS NULL OR EXISTS (SELECT 1 FROM claim)
    RETURNING ${JOB_COLUMNS}),
  plan AS (
    INSERT INTO vault_forward_job_plans (job_id, merchant_account_id, ciphertext, wrapped_key, master_key_id)
    SELECT id, merchant_account_id, $10, $11, $12 FROM job),
  idempotency AS (
    UPDATE vault_forward_idempotency_keys SET state = 'done', job_id = $1 WHERE id IN (SELECT id FROM claim))
  SELECT * FROM job`;

/**
 * Takes attempt $3 + 1 of a queued job (status running, the attempt written without outcome) and
 * returns the row with its sealed plan: one statement. Nothing when the job is not queued at that
 * attempt (cancelled, ended, taken, or this BullMQ job is a repeat): the caller then reads the row.
 */
const CLAIM = `WITH claimed AS (
    UPDATE vault_forward_jobs SET status = 'running', attempts = attempts || $2::jsonb, next_attempt_at = NULL, updated_at = now(),
           lease_expires_at = now() + make_interval(secs => $4::int / 1000.0)
     WHERE id = $1 AND status = 'queued' AND jsonb_array_length(attempts) = $3
    RETURNING ${JOB_COLUMNS})
  SELECT c.*, p.ciphertext, p.wrapped_key, p.master_key_id FROM claimed c LEFT JOIN vault_forward_job_plans p ON p.job_id = c.id`;

/**
 * Ends a job: its sealed response stored (when there is one), its plan deleted (the request, with
 * literal CVVs and forwarded credentials, is no longer needed), the row ended with its attempts. One
 * statement, so one commit. Only while the job is running attempt $9 (the row's last): an attempt
 * superseded meanwhile, or a job that has ended, changes nothing here (docs/decisions/0120); the
 * answer, the plan's deletion and the row's end all hang on that one conditional UPDATE.
 */
const FINISH = `WITH ended AS (
    UPDATE vault_forward_jobs
       SET status = $3, attempts = $4::jsonb, next_attempt_at = NULL, response_status = $5, updated_at = now(), finished_at = now()
     WHERE id = $1 AND status = 'running' AND attempts -> -1 ->> 'request_id' = $9::text
    RETURNING id),
  response AS (
    INSERT INTO vault_forward_job_responses (job_id, merchant_account_id, ciphertext, wrapped_key, master_key_id)
    SELECT id, $2, $6::bytea, $7::bytea, $8::text FROM ended WHERE $6::bytea IS NOT NULL
    ON CONFLICT (job_id) DO UPDATE
      SET ciphertext = EXCLUDED.ciphertext, wrapped_key = EXCLUDED.wrapped_key, master_key_id = EXCLUDED.master_key_id),
  plan AS (DELETE FROM vault_forward_job_plans WHERE job_id IN (SELECT id FROM ended))
  SELECT id FROM ended`;

const J_COLUMNS = JOB_COLUMNS.split(',')
  .map((column) => `j.${column.trim()}`)
  .join(', ');

/** CREATE for many jobs (StatementBatcher); the id lists travel as array literals (arrays of arrays do not fit unnest()). */
const CREATE_MANY = `WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[],
                         $9::text[], $10::bytea[], $11::bytea[], $12::text[], $13::uuid[])
      AS i(id, merchant, method, target, pms, auths, max_attempts, idempotency_key, callback_url,
           ciphertext, wrapped_key, master_key_id, claim_id)),
  claim AS (
    SELECT k.id FROM vault_forward_idempotency_keys k JOIN input i ON k.id = i.claim_id WHERE k.state = 'running' FOR UPDATE OF k),
  accepted AS (SELECT * FROM input WHERE claim_id IS NULL OR claim_id IN (SELECT id FROM claim)),
  job AS (
    INSERT INTO vault_forward_jobs
      (id, merchant_account_id, method, target_url, payment_method_ids, authentication_ids, max_attempts, idempotency_key, callback_url)
    SELECT id, merchant, method, target, pms::text[], auths::text[], max_attempts, idempotency_key, callback_url FROM accepted
    RETURNING ${JOB_COLUMNS}),
  plan AS (
    INSERT INTO vault_forward_job_plans (job_id, merchant_account_id, ciphertext, wrapped_key, master_key_id)
    SELECT id, merchant, ciphertext, wrapped_key, master_key_id FROM accepted),
  idempotency AS (
    UPDATE vault_forward_idempotency_keys k SET state = 'done', job_id = a.id FROM accepted a WHERE k.id = a.claim_id)
  SELECT * FROM job`;

/** CLAIM for many (job, attempt) pairs; a job named twice is claimed once (its row's last attempt says by which). */
const CLAIM_MANY = `WITH input AS (SELECT * FROM unnest($1::uuid[], $2::jsonb[], $3::int[]) AS i(id, entry, done)),
  claimed AS (
    UPDATE vault_forward_jobs j SET status = 'running', attempts = j.attempts || i.entry, next_attempt_at = NULL, updated_at = now(),
           lease_expires_at = now() + make_interval(secs => $4::int / 1000.0)
      FROM input i WHERE j.id = i.id AND j.status = 'queued' AND jsonb_array_length(j.attempts) = i.done
    RETURNING ${J_COLUMNS})
  SELECT c.*, p.ciphertext, p.wrapped_key, p.master_key_id FROM claimed c LEFT JOIN vault_forward_job_plans p ON p.job_id = c.id`;

/** FINISH for many jobs (a job named twice fails the batch, which then runs item by item), each on its own condition. */
const FINISH_MANY = `WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::int[], $6::bytea[], $7::bytea[], $8::text[],
                         $9::text[])
      AS i(id, merchant, status, attempts, response_status, ciphertext, wrapped_key, master_key_id, request_id)),
  ended AS (
    UPDATE vault_forward_jobs j
       SET status = i.status, attempts = i.attempts, next_attempt_at = NULL, response_status = i.response_status,
           updated_at = now(), finished_at = now()
      FROM input i WHERE j.id = i.id AND j.status = 'running' AND j.attempts -> -1 ->> 'request_id' = i.request_id
    RETURNING j.id),
  response AS (
    INSERT INTO vault_forward_job_responses (job_id, merchant_account_id, ciphertext, wrapped_key, master_key_id)
    SELECT i.id, i.merchant, i.ciphertext, i.wrapped_key, i.master_key_id FROM input i JOIN ended e ON e.id = i.id
     WHERE i.ciphertext IS NOT NULL
    ON CONFLICT (job_id) DO UPDATE
      SET ciphertext = EXCLUDED.ciphertext, wrapped_key = EXCLUDED.wrapped_key, master_key_id = EXCLUDED.master_key_id),
  plan AS (DELETE FROM vault_forward_job_plans p USING ended e WHERE p.job_id = e.id)
  SELECT id FROM ended`;

/**
 * An attempt that is retried (or, with its entry removed, given back): the row waits for the next one
 * (its BullMQ job carries the delay). Only while the job is running attempt $4, as FINISH.
 */
const REQUEUE =
  `UPDATE vault_forward_jobs SET status = 'queued', attempts = $2::jsonb, next_attempt_at = $3, updated_at = now() ` +
  `WHERE id = $1 AND status = 'running' AND attempts -> -1 ->> 'request_id' = $4::text RETURNING id`;

/**
 * The outcome of an attempt that no longer owns its job (superseded, or the job ended): kept in that
 * attempt's entry of the history, the job's status and answer untouched. It replaces an entry without
 * outcome, or one closed as outcome-unknown by the worker that took the job over: the late answer is
 * what happened. The entry's next_attempt_at stays the row's (the next attempt that did follow, if any).
 */
const RECORD_LATE = `UPDATE vault_forward_jobs
     SET attempts = jsonb_set(attempts, ARRAY[$2::int::text],
                              $3::jsonb || jsonb_build_object('next_attempt_at', attempts -> $2::int -> 'next_attempt_at')),
         updated_at = now()
   WHERE id = $1 AND attempts -> $2::int ->> 'request_id' = $4::text
     AND (attempts -> $2::int -> 'duration_ms' = 'null'::jsonb OR attempts -> $2::int ->> 'error_type' = 'outcome-unknown')
   RETURNING id`;

/**
 * Job rows and their sealed parts. The plan (literal CVVs, forwarded header values) and the response
 * are sealed before they reach PostgreSQL, each bound to its merchant and job (a blob moved to another
 * row does not open), and rotate with `vault rotate-keys` (SEALED_TABLES). The queued path's steps
 * (create, claim, finish, requeue) are one prepared statement each on Sql, with no TypeORM (the
 * round trips were most of a job's CPU, docs/benchmarks.md); the resource's reads use the repository.
 */
@Injectable()
export class ForwardJobStore {
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
    @InjectRepository(ForwardJob) readonly jobs: Repository<ForwardJob>,
    private readonly dataSource: DataSource,
    private readonly sql: Sql,
    private readonly sealer: SecretSealer,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.leaseMs = config.queueLockMs;
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
      job.idempotencyKey,
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
   * Jobs whose BullMQ job may be gone, with the attempt to enqueue again: queued ones overdue by
   * `overdueSeconds` (the next attempt), and running ones whose lease lapsed (the running attempt,
   * whose next delivery closes it as worker-lost).
   */
  async stranded(overdueSeconds: number, limit: number): Promise<Array<{ id: string; attempt: number }>> {
    const rows = await this.sql.prepared<{ id: string; attempt: number }>(
      'forward-jobs.stranded',
      `(SELECT id, jsonb_array_length(attempts) + 1 AS attempt FROM vault_forward_jobs
         WHERE status = 'queued' AND COALESCE(next_attempt_at, created_at) < now() - make_interval(secs => $1) LIMIT $2)
       UNION ALL
       (SELECT id, jsonb_array_length(attempts) AS attempt FROM vault_forward_jobs
         WHERE status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at < now()) LIMIT $2)`,
      [overdueSeconds, limit],
    );
    return rows.map((row) => ({ id: row.id, attempt: Number(row.attempt) }));
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

  /** The stored answer of a finished job, or null (none, or purged after FORWARD_JOB_RETENTION). */
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
   * Deletes the sealed responses of jobs that ended more than `retentionSeconds` ago, and any plan
   * an ended job still has. Returns how many sealed rows went.
   */
  async purge(retentionSeconds: number): Promise<number> {
    const [, responses] = await this.dataSource.query<[unknown, number]>(
      `DELETE FROM vault_forward_job_responses r USING vault_forward_jobs j
        WHERE r.job_id = j.id AND j.finished_at < now() - make_interval(secs => $1)`,
      [retentionSeconds],
    );
    const [, plans] = await this.dataSource.query<[unknown, number]>(
      `DELETE FROM vault_forward_job_plans p USING vault_forward_jobs j WHERE p.job_id = j.id AND j.finished_at IS NOT NULL`,
    );
    return responses + plans;
  }
}

interface SealedRow {
  ciphertext: Buffer;
  wrapped_key: Buffer;
  master_key_id: string;
}

function sealedRecord(row: SealedRow) {
  return { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id };
}

interface JobRow {
  id: string;
  merchant_account_id: string;
  status: JobStatus;
  method: string;
  target_url: string;
  payment_method_ids: string[];
  authentication_ids: string[];
  max_attempts: number;
  idempotency_key: string | null;
  callback_url: string | null;
  attempts: JobAttempt[];
  next_attempt_at: Timestamp | null;
  response_status: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
}

function jobOf(row: JobRow): ForwardJob {
  return Object.assign(new ForwardJob(), {
    id: row.id,
    merchantAccountId: row.merchant_account_id,
    status: row.status,
    method: row.method,
    targetUrl: row.target_url,
    paymentMethodIds: row.payment_method_ids,
    authenticationIds: row.authentication_ids,
    maxAttempts: row.max_attempts,
    idempotencyKey: row.idempotency_key,
    callbackUrl: row.callback_url,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    responseStatus: row.response_status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  });
}

interface ClaimItem {
  jobId: string;
  /** `[attempt]` as JSON. */
  entry: string;
  /** Attempts the row must have already. */
  done: number;
  requestId: string;
}

type ClaimedRow = JobRow & Partial<SealedRow>;

/** Per-item parameter lists to per-column arrays for unnest(); the columns in `arrays` (text[] values) become array literals. */
function transpose(items: unknown[][], arrays: number[]): unknown[][] {
  return items[0].map((_, column) =>
    items.map((values) => (arrays.includes(column) ? textArrayLiteral(values[column] as string[]) : values[column])),
  );
}
