import { textArrayLiteral } from '../../../../platform/database/statement-batcher';
import type { Timestamp } from '../../../../platform/database/timestamp';
import { ForwardJob, JobAttempt, JobStatus, ResponseErasedReason } from './forward-job.entity';

/**
 * The prepared statements of the queued path (ForwardJobsRepository): create, claim, finish, requeue and
 * their batched forms, and the rows they return. Every transition of a running job is conditional on the attempt that owns it
 * (docs/decisions/0120).
 */

/** The job's columns as a prepared statement returns them (ForwardJob's, under their SQL names). */
export const JOB_COLUMNS = `id, merchant_account_id, status, method, target_url, payment_method_ids, authentication_ids, max_attempts,
  idempotency_key, legacy_idempotency_key, callback_url, attempts, next_attempt_at, response_status, created_at, updated_at,
  finished_at, response_received_at, response_erased_at, response_erased_reason`;

/**
 * The row, its sealed plan and (for an Idempotency-Key) the key's link to the job, in one statement:
 * one round trip and one commit, and a key is never left claimed without its job. With a claim, the job
 * is created only while that claim still holds the key (locked here): a claim whose request outlived
 * its lease may have been taken over by a retry, which then creates the key's one job instead.
 */
export const CREATE = `WITH claim AS (
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
export const CLAIM = `WITH claimed AS (
    UPDATE vault_forward_jobs SET status = 'running', attempts = attempts || $2::jsonb, next_attempt_at = NULL, updated_at = now(),
           lease_expires_at = now() + make_interval(secs => $4::int / 1000.0)
     WHERE id = $1 AND status = 'queued' AND jsonb_array_length(attempts) = $3
    RETURNING ${JOB_COLUMNS})
  SELECT c.*, p.ciphertext, p.wrapped_key, p.master_key_id FROM claimed c LEFT JOIN vault_forward_job_plans p ON p.job_id = c.id`;

/**
 * Ends a job: its sealed response stored (when there is one), its plan deleted (the request, with
 * literal CVVs, forwarded credentials and the Idempotency-Key, is no longer needed; so is a legacy
 * row's key in clear), the row ended with its attempts. One
 * statement, so one commit. Only while the job is running attempt $9 (the row's last): an attempt
 * superseded meanwhile, or a job that has ended, changes nothing here (docs/decisions/0120); the
 * answer, the plan's deletion and the row's end all hang on that one conditional UPDATE.
 */
export const FINISH = `WITH ended AS (
    UPDATE vault_forward_jobs
       SET status = $3, attempts = $4::jsonb, next_attempt_at = NULL, response_status = $5, updated_at = now(), finished_at = now(),
           legacy_idempotency_key = NULL
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
export const CREATE_MANY = `WITH input AS (
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
export const CLAIM_MANY = `WITH input AS (SELECT * FROM unnest($1::uuid[], $2::jsonb[], $3::int[]) AS i(id, entry, done)),
  claimed AS (
    UPDATE vault_forward_jobs j SET status = 'running', attempts = j.attempts || i.entry, next_attempt_at = NULL, updated_at = now(),
           lease_expires_at = now() + make_interval(secs => $4::int / 1000.0)
      FROM input i WHERE j.id = i.id AND j.status = 'queued' AND jsonb_array_length(j.attempts) = i.done
    RETURNING ${J_COLUMNS})
  SELECT c.*, p.ciphertext, p.wrapped_key, p.master_key_id FROM claimed c LEFT JOIN vault_forward_job_plans p ON p.job_id = c.id`;

/** FINISH for many jobs (a job named twice fails the batch, which then runs item by item), each on its own condition. */
export const FINISH_MANY = `WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::int[], $6::bytea[], $7::bytea[], $8::text[],
                         $9::text[])
      AS i(id, merchant, status, attempts, response_status, ciphertext, wrapped_key, master_key_id, request_id)),
  ended AS (
    UPDATE vault_forward_jobs j
       SET status = i.status, attempts = i.attempts, next_attempt_at = NULL, response_status = i.response_status,
           updated_at = now(), finished_at = now(), legacy_idempotency_key = NULL
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
export const REQUEUE =
  `UPDATE vault_forward_jobs SET status = 'queued', attempts = $2::jsonb, next_attempt_at = $3, updated_at = now() ` +
  `WHERE id = $1 AND status = 'running' AND attempts -> -1 ->> 'request_id' = $4::text RETURNING id`;

/**
 * The outcome of an attempt that no longer owns its job (superseded, or the job ended): kept in that
 * attempt's entry of the history, the job's status and answer untouched. It replaces an entry without
 * outcome, or one closed as outcome-unknown by the worker that took the job over: the late answer is
 * what happened. The entry's next_attempt_at stays the row's (the next attempt that did follow, if any).
 */
export const RECORD_LATE = `UPDATE vault_forward_jobs
     SET attempts = jsonb_set(attempts, ARRAY[$2::int::text],
                              $3::jsonb || jsonb_build_object('next_attempt_at', attempts -> $2::int -> 'next_attempt_at')),
         updated_at = now()
   WHERE id = $1 AND attempts -> $2::int ->> 'request_id' = $4::text
     AND (attempts -> $2::int -> 'duration_ms' = 'null'::jsonb OR attempts -> $2::int ->> 'error_type' = 'outcome-unknown')
   RETURNING id`;

/**
 * The jobs not ended by queue state (QueueMetrics, decision 0150), each half through its partial index: waiting
 * (due; aged from then), delayed (a later attempt; from creation), running (from its claim, which set updated_at).
 */
export const QUEUE_STATE_NAMES = ['waiting', 'delayed', 'running'];
export const QUEUE_STATES = `SELECT state, count(*)::int AS depth, extract(epoch FROM now() - min(since))::float8 AS "oldestAgeSeconds",
         extract(epoch FROM now() - min(created_at))::float8 AS "oldestCreatedSeconds"
    FROM (SELECT CASE WHEN next_attempt_at > now() THEN 'delayed' ELSE 'waiting' END AS state, created_at,
                 CASE WHEN next_attempt_at > now() THEN created_at ELSE COALESCE(next_attempt_at, created_at) END AS since
            FROM vault_forward_jobs WHERE status = 'queued'
          UNION ALL SELECT 'running', created_at, updated_at FROM vault_forward_jobs WHERE status = 'running') AS unended
   GROUP BY state`;

export interface SealedRow {
  ciphertext: Buffer;
  wrapped_key: Buffer;
  master_key_id: string;
}

export function sealedRecord(row: SealedRow) {
  return { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id };
}

export interface JobRow {
  id: string;
  merchant_account_id: string;
  status: JobStatus;
  method: string;
  target_url: string;
  payment_method_ids: string[];
  authentication_ids: string[];
  max_attempts: number;
  idempotency_key: string | null;
  legacy_idempotency_key: string | null;
  callback_url: string | null;
  attempts: JobAttempt[];
  next_attempt_at: Timestamp | null;
  response_status: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
  response_received_at: Timestamp | null;
  response_erased_at: Timestamp | null;
  response_erased_reason: ResponseErasedReason | null;
}

export function jobOf(row: JobRow): ForwardJob {
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
    legacyIdempotencyKey: row.legacy_idempotency_key,
    callbackUrl: row.callback_url,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    responseStatus: row.response_status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    responseReceivedAt: row.response_received_at,
    responseErasedAt: row.response_erased_at,
    responseErasedReason: row.response_erased_reason,
  });
}

export interface ClaimItem {
  jobId: string;
  /** `[attempt]` as JSON. */
  entry: string;
  /** Attempts the row must have already. */
  done: number;
  requestId: string;
}

export type ClaimedRow = JobRow & Partial<SealedRow>;

/** Per-item parameter lists to per-column arrays for unnest(); the columns in `arrays` (text[] values) become array literals. */
export function transpose(items: unknown[][], arrays: number[]): unknown[][] {
  return items[0].map((_, column) =>
    items.map((values) => (arrays.includes(column) ? textArrayLiteral(values[column] as string[]) : values[column])),
  );
}
