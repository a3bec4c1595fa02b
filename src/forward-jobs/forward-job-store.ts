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
 * statement, so one commit.
 */
const FINISH = `WITH response AS (
    INSERT INTO vault_forward_job_responses (job_id, merchant_account_id, ciphertext, wrapped_key, master_key_id)
    SELECT $1, $2, $6::bytea, $7::bytea, $8::text WHERE $6::bytea IS NOT NULL
    ON CONFLICT (job_id) DO UPDATE
      SET ciphertext = EXCLUDED.ciphertext, wrapped_key = EXCLUDED.wrapped_key, master_key_id = EXCLUDED.master_key_id),
  plan AS (DELETE FROM vault_forward_job_plans WHERE job_id = $1)
  UPDATE vault_forward_jobs
     SET status = $3, attempts = $4::jsonb, next_attempt_at = NULL, response_status = $5, updated_at = now(), finished_at = now()
   WHERE id = $1`;

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

/** FINISH for many jobs (a job named twice fails the batch, which then runs item by item). */
const FINISH_MANY = `WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::int[], $6::bytea[], $7::bytea[], $8::text[])
      AS i(id, merchant, status, attempts, response_status, ciphertext, wrapped_key, master_key_id)),
  response AS (
    INSERT INTO vault_forward_job_responses (job_id, merchant_account_id, ciphertext, wrapped_key, master_key_id)
    SELECT id, merchant, ciphertext, wrapped_key, master_key_id FROM input WHERE ciphertext IS NOT NULL
    ON CONFLICT (job_id) DO UPDATE
      SET ciphertext = EXCLUDED.ciphertext, wrapped_key = EXCLUDED.wrapped_key, master_key_id = EXCLUDED.master_key_id),
  plan AS (DELETE FROM vault_forward_job_plans p USING input i WHERE p.job_id = i.id)
  UPDATE vault_forward_jobs j
     SET status = i.status, attempts = i.attempts, next_attempt_at = NULL, response_status = i.response_status,
         updated_at = now(), finished_at = now()
    FROM input i WHERE j.id = i.id`;

/** An attempt that is retried: the row waits for the next one (its BullMQ job carries the delay). */
const REQUEUE =
  `UPDATE vault_forward_jobs SET status = 'queued', attempts = $2::jsonb, next_attempt_at = $3, updated_at = now() ` +
  `WHERE id = $1 AND status = 'running'`;

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
  private readonly finishes: StatementBatcher<unknown[], void>;

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
    this.finishes = new StatementBatcher<unknown[], void>({
      one: async (values) => void (await this.sql.prepared('forward-jobs.finish', FINISH, values)),
      many: async (items) => {
        await this.sql.prepared('forward-jobs.finish-many', FINISH_MANY, transpose(items, []));
        return items.map(() => undefined);
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

  /** Extends the leases of the running jobs a worker holds; a job that has ended meanwhile is left alone. */
  async renewLeases(jobIds: string[]): Promise<void> {
    await this.sql.prepared(
      'forward-jobs.renew-leases',
      `UPDATE vault_forward_jobs SET lease_expires_at = now() + make_interval(secs => $2::int / 1000.0)
        WHERE id = ANY($1::uuid[]) AND status = 'running'`,
      [jobIds, this.leaseMs],
    );
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

  /** Ends a job (see FINISH); the response is sealed here. */
  async finish(
    job: Pick<ForwardJob, 'id' | 'merchantAccountId' | 'attempts'>,
    status: JobStatus,
    response: StoredResponse | null,
  ): Promise<void> {
    const sealed = response ? this.sealer.sealJson(responseAad(job.merchantAccountId, job.id), response) : null;
    await this.finishes.run([
      job.id,
      job.merchantAccountId,
      status,
      JSON.stringify(job.attempts),
      response?.status ?? null,
      sealed?.ciphertext ?? null,
      sealed?.wrappedKey ?? null,
      sealed?.masterKeyId ?? null,
    ]);
  }

  /** Back to queued after a retried attempt, due at `nextAttemptAt` (ISO, µs). */
  async requeue(job: Pick<ForwardJob, 'id' | 'attempts'>, nextAttemptAt: string): Promise<void> {
    await this.sql.prepared('forward-jobs.requeue', REQUEUE, [job.id, JSON.stringify(job.attempts), nextAttemptAt]);
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
