import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { DueDelivery } from './callback-jobs';
import type { QueueState } from '../../../platform/metrics/queue-metrics';

/** What is sealed, as stored. */
interface SealedColumns {
  ciphertext: Buffer;
  wrapped_key: Buffer;
  master_key_id: string;
}

/** A claimed delivery: its row, its sealed message, and its attempt (the claim's). */
export interface DueRow extends SealedColumns {
  id: string;
  merchant_account_id: string;
  message_id: string;
  url: string;
  attempts: number;
  max_attempts: number;
}

/** A new delivery row: its sealed message, the URL as logged. */
interface NewDelivery {
  id: string;
  merchantAccountId: string;
  messageId: string;
  loggedUrl: string;
  sealed: { ciphertext: Buffer; wrappedKey: Buffer; masterKeyId: string };
  maxAttempts: number;
}

/** The states of a delivery not ended yet, as queueStates() names them. */
export const CALLBACK_QUEUE_STATES = ['waiting', 'delayed', 'waiting_for_secret'];

/** A delivery and its next attempt with the attempts left from there (DueDelivery), as SQL selects it. */
const DUE = `id, attempts + 1 AS attempt, max_attempts - attempts AS attempts`;

/**
 * The data access of job-end callbacks: `vault_forward_callback_deliveries` (a delivery's state, its
 * attempts, its sealed message) and `vault_forward_job_callback_urls` (a queued forward's sealed callback
 * URL). Every statement is here; CallbackDeliveries keeps the rules (sealing, signing, what an answer
 * means). Each transition of a delivery is conditional on the attempt it concerns.
 */
@Injectable()
export class CallbackDeliveriesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** In a webhook secret's creating transaction: the merchant's deliveries waiting for one made due. */
  async wakeWaiting(manager: EntityManager, merchantAccountId: string): Promise<DueDelivery[]> {
    const [woken] = await manager.query<[DueDelivery[], number]>(
      `UPDATE vault_forward_callback_deliveries SET next_attempt_at = now()
        WHERE merchant_account_id = $1 AND state = 'pending' AND next_attempt_at = 'infinity'
        RETURNING ${DUE}`,
      [merchantAccountId],
    );
    return woken;
  }

  /** Stores a delivery, unless its message is stored already (same webhook-id: delivered once). */
  async insert(delivery: NewDelivery): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO vault_forward_callback_deliveries
         (id, merchant_account_id, message_id, url, ciphertext, wrapped_key, master_key_id, max_attempts)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (message_id) DO NOTHING`,
      [
        delivery.id,
        delivery.merchantAccountId,
        delivery.messageId,
        delivery.loggedUrl,
        delivery.sealed.ciphertext,
        delivery.sealed.wrappedKey,
        delivery.sealed.masterKeyId,
        delivery.maxAttempts,
      ],
    );
  }

  /** The delivery of a message, if its next attempt is due. */
  dueByMessage(messageId: string): Promise<DueDelivery[]> {
    return this.dataSource.query<DueDelivery[]>(
      `SELECT ${DUE} FROM vault_forward_callback_deliveries
        WHERE message_id = $1 AND state = 'pending' AND next_attempt_at <= now()`,
      [messageId],
    );
  }

  async insertJobCallbackUrl(
    merchantAccountId: string,
    jobId: string,
    sealed: { ciphertext: Buffer; wrappedKey: Buffer; masterKeyId: string },
  ): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO vault_forward_job_callback_urls (job_id, merchant_account_id, ciphertext, wrapped_key, master_key_id)
       VALUES ($1, $2, $3, $4, $5)`,
      [jobId, merchantAccountId, sealed.ciphertext, sealed.wrappedKey, sealed.masterKeyId],
    );
  }

  async jobCallbackUrl(merchantAccountId: string, jobId: string): Promise<SealedColumns | null> {
    const rows = await this.dataSource.query<SealedColumns[]>(
      `SELECT ciphertext, wrapped_key, master_key_id FROM vault_forward_job_callback_urls
        WHERE job_id = $1 AND merchant_account_id = $2`,
      [jobId, merchantAccountId],
    );
    return rows[0] ?? null;
  }

  /**
   * Takes attempt `attempt` of a delivery only if the row waits for exactly it and is not waiting for a
   * secret, leasing the row (next_attempt_at) for `leaseSeconds`: the row, or null.
   */
  async claim(id: string, attempt: number, leaseSeconds: number): Promise<DueRow | null> {
    const [rows] = await this.dataSource.query<[DueRow[], number]>(
      `UPDATE vault_forward_callback_deliveries
          SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $3)
        WHERE id = $1 AND state = 'pending' AND attempts = $2 - 1 AND next_attempt_at <> 'infinity'
        RETURNING id, merchant_account_id, message_id, url, ciphertext, wrapped_key, master_key_id, attempts, max_attempts`,
      [id, attempt, leaseSeconds],
    );
    return rows[0] ?? null;
  }

  /**
   * When the pending delivery has attempt `attempt` already (recorded, or claimed under its lease): the
   * milliseconds until its next attempt is due (0 when it is); null otherwise.
   */
  async untilNextAttempt(id: string, attempt: number): Promise<number | null> {
    const [row] = await this.dataSource.query<Array<{ due_in_ms: number }>>(
      `SELECT greatest(0, ceil(extract(epoch FROM next_attempt_at - now()) * 1000))::float8 AS due_in_ms
         FROM vault_forward_callback_deliveries
        WHERE id = $1 AND state = 'pending' AND attempts >= $2 AND next_attempt_at <> 'infinity'`,
      [id, attempt],
    );
    return row ? Number(row.due_in_ms) : null;
  }

  /** Pending deliveries overdue by `overdueSeconds` for their next attempt, oldest first. */
  overdue(overdueSeconds: number, limit: number): Promise<DueDelivery[]> {
    return this.dataSource.query<DueDelivery[]>(
      `SELECT ${DUE} FROM vault_forward_callback_deliveries
        WHERE state = 'pending' AND next_attempt_at < now() - make_interval(secs => $1)
        ORDER BY next_attempt_at LIMIT $2`,
      [overdueSeconds, limit],
    );
  }

  /**
   * The deliveries not ended, by queue state, for the queue gauges (decision 0150): waiting (due; its age counts
   * from when it was due), delayed (a later attempt, or one under way under its lease; from its creation),
   * waiting_for_secret (the merchant has no webhook secret yet; from its creation).
   */
  queueStates(): Promise<QueueState[]> {
    return this.dataSource.query<QueueState[]>(
      `SELECT state, count(*)::int AS depth,
              extract(epoch FROM now() - min(since))::float8 AS "oldestAgeSeconds",
              extract(epoch FROM now() - min(created_at))::float8 AS "oldestCreatedSeconds"
         FROM (SELECT created_at, CASE WHEN next_attempt_at > now() THEN created_at ELSE next_attempt_at END AS since,
                      CASE WHEN next_attempt_at = 'infinity' THEN 'waiting_for_secret'
                           WHEN next_attempt_at > now() THEN 'delayed' ELSE 'waiting' END AS state
                 FROM vault_forward_callback_deliveries WHERE state = 'pending') AS pending
        GROUP BY state`,
    );
  }

  /**
   * Fails deliveries still waiting for a secret after `retentionSeconds` (`reason`), deletes the deliveries
   * that ended that long ago and the sealed callback URLs of jobs that ended `urlRetentionSeconds` ago.
   * Returns how many deliveries went.
   */
  async purge(retentionSeconds: number, reason: string, urlRetentionSeconds: number): Promise<number> {
    await this.dataSource.query(
      `UPDATE vault_forward_callback_deliveries SET state = 'failed', ended_at = now(), last_error = $2
        WHERE state = 'pending' AND next_attempt_at = 'infinity' AND created_at < now() - make_interval(secs => $1)`,
      [retentionSeconds, reason],
    );
    await this.dataSource.query(
      `DELETE FROM vault_forward_job_callback_urls u USING vault_forward_jobs j
        WHERE u.job_id = j.id AND j.finished_at < now() - make_interval(secs => $1)`,
      [urlRetentionSeconds],
    );
    const result = await this.dataSource.query<[unknown[], number]>(
      `DELETE FROM vault_forward_callback_deliveries WHERE state <> 'pending' AND ended_at < now() - make_interval(secs => $1)`,
      [retentionSeconds],
    );
    return result[1];
  }

  /**
   * The claimed attempt taken back, waiting for the merchant's first webhook secret (next_attempt_at
   * infinity) unless one exists by now, under the secrets' advisory lock (a secret created meanwhile is
   * either seen here or wakes the row). True when the row is due now instead.
   */
  waitForSecret(row: DueRow, reason: string): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('vault-forward-webhook-secrets'), hashtext($1))`, [
        row.merchant_account_id,
      ]);
      const [rows] = await manager.query<[Array<{ due: boolean }>, number]>(
        `UPDATE vault_forward_callback_deliveries
            SET attempts = attempts - 1, last_error = $3,
                next_attempt_at = CASE WHEN EXISTS (
                  SELECT 1 FROM vault_forward_webhook_secrets
                   WHERE merchant_account_id = $2 AND (expires_at IS NULL OR expires_at > now())
                ) THEN now() ELSE 'infinity' END
          WHERE id = $1
          RETURNING next_attempt_at <> 'infinity' AS due`,
        [row.id, row.merchant_account_id, reason],
      );
      return rows[0]?.due === true;
    });
  }

  /** The claim of attempt `row.attempts` taken back, due now (only while the row still has that attempt). */
  async giveBack(row: DueRow, reason: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE vault_forward_callback_deliveries
          SET attempts = attempts - 1, next_attempt_at = now(), last_error = $3
        WHERE id = $1 AND state = 'pending' AND attempts = $2`,
      [row.id, row.attempts, reason],
    );
  }

  /** An attempt's outcome: the delivery's state, the answer's status or the error, the next attempt's delay. */
  async recordOutcome(
    id: string,
    outcome: {
      state: 'delivered' | 'failed' | 'pending';
      status: number | null;
      error: string | null;
      delayMs: number;
    },
  ): Promise<void> {
    await this.dataSource.query(
      `UPDATE vault_forward_callback_deliveries
          SET state = $2, last_status = $3, last_error = $4,
              next_attempt_at = now() + make_interval(secs => $5::double precision / 1000),
              ended_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END
        WHERE id = $1`,
      [id, outcome.state, outcome.status, outcome.error, outcome.delayMs],
    );
  }
}
