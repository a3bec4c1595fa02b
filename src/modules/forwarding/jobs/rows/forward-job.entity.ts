import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamp } from '../../../../platform/database/timestamp';

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const ENDED_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];
/** Why an ended job's answer is gone (decision 0139): the merchant had it, or the retention ended. */
export const RESPONSE_ERASED_REASONS = ['received', 'retention'] as const;
export type ResponseErasedReason = (typeof RESPONSE_ERASED_REASONS)[number];

/**
 * One attempt of a queued forward, as stored (jsonb) and shown. An attempt is written when it starts
 * (no outcome yet), so one that a killed worker never finished still counts.
 */
export interface JobAttempt {
  number: number;
  /** The forward record of this attempt (GET /vault-forward/requests/{id}). */
  request_id: string;
  started_at: string;
  duration_ms: number | null;
  /** The downstream's status, or null when no answer came. */
  status: number | null;
  /** Why no answer counted: a problem code (downstream-unreachable, …) or `outcome-unknown` (its worker was lost mid-attempt). */
  error_type: string | null;
  /** When the next attempt runs, if this one is retried. */
  next_attempt_at: string | null;
}

/** A queued forward (POST /vault-forward with Prefer: respond-async); its plan and response are sealed elsewhere. */
@Entity({ name: 'vault_forward_jobs' })
export class ForwardJob {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ type: 'text', name: 'merchant_account_id' })
  merchantAccountId!: string;

  @Column({ type: 'text' })
  status!: JobStatus;

  @Column({ type: 'text' })
  method!: string;

  @Column({ type: 'text', name: 'target_url' })
  targetUrl!: string;

  @Column({ type: 'text', array: true, name: 'payment_method_ids' })
  paymentMethodIds!: string[];

  @Column({ type: 'text', array: true, name: 'authentication_ids' })
  authenticationIds!: string[];

  @Column({ type: 'integer', name: 'max_attempts' })
  maxAttempts!: number;

  /** The Idempotency-Key's keyed hash (CardVault.keyedHash), never the key (decision 0139). */
  @Column({ type: 'text', name: 'idempotency_key', nullable: true })
  idempotencyKey!: string | null;

  /** A job queued before keys were hashed, still waiting or running: its key in clear, cleared when it ends. */
  @Column({ type: 'text', name: 'legacy_idempotency_key', nullable: true })
  legacyIdempotencyKey!: string | null;

  @Column({ type: 'text', name: 'callback_url', nullable: true })
  callbackUrl!: string | null;

  @Column({ type: 'jsonb' })
  attempts!: JobAttempt[];

  @Column({ type: 'timestamptz', name: 'next_attempt_at', nullable: true })
  nextAttemptAt!: Timestamp | null;

  @Column({ type: 'integer', name: 'response_status', nullable: true })
  responseStatus!: number | null;

  @Column({ type: 'timestamptz', name: 'created_at', insert: false, update: false })
  createdAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'updated_at', insert: false, update: false })
  updatedAt!: Timestamp;

  @Column({ type: 'timestamptz', name: 'finished_at', nullable: true, insert: false, update: false })
  finishedAt!: Timestamp | null;

  /** When the merchant first had the answer: a read of the ended job, or its callback delivered. */
  @Column({ type: 'timestamptz', name: 'response_received_at', nullable: true, insert: false, update: false })
  responseReceivedAt!: Timestamp | null;

  @Column({ type: 'timestamptz', name: 'response_erased_at', nullable: true, insert: false, update: false })
  responseErasedAt!: Timestamp | null;

  @Column({ type: 'text', name: 'response_erased_reason', nullable: true, insert: false, update: false })
  responseErasedReason!: ResponseErasedReason | null;
}
