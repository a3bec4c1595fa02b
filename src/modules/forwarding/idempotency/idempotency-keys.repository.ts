import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { SealedRecord } from '../../vault/envelope';

export type IdempotencyKind = 'sync' | 'async';

export interface KeyRow {
  id: string;
  merchant_account_id: string;
  fingerprint: Buffer;
  kind: IdempotencyKind;
  state: 'running' | 'done';
  job_id: string | null;
  ciphertext: Buffer | null;
  wrapped_key: Buffer | null;
  master_key_id: string | null;
}

/**
 * A claim's release: its row, by id (a later claim of the same key has another id), unless a job was
 * created under it after all (the create committed, its answer lost): then the key keeps pointing at
 * that job, which the housekeeping runs, so a retry gets it back rather than a second job.
 */
const RELEASE = `DELETE FROM vault_forward_idempotency_keys k WHERE k.id = ANY($1::uuid[])
    AND (k.job_id IS NULL OR NOT EXISTS (SELECT 1 FROM vault_forward_jobs j WHERE j.id = k.job_id))`;
const KEY_ROW = `id, merchant_account_id, fingerprint, kind, state, job_id, ciphertext, wrapped_key, master_key_id`;

/**
 * Every read and write of vault_forward_idempotency_keys but the job link, which a queued forward's job
 * creation writes in its own statement (forwarding/jobs). The `key` column holds the key's keyed hash
 * (`key_hashed`), never the key; rows written before decision 0139 hold it in clear until their first
 * use turns them (`legacy`, `upgrade`) or the purge deletes them after their 24 h.
 */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Takes the key (`claim.key`: its keyed hash) in one statement: a new row, or one whose time is up
   * (expired, or a running claim older than its kind's `abandonedAfterSeconds`), taken over. Whether this claim holds it now.
   */
  async take(
    claim: { id: string; merchantAccountId: string; key: string; fingerprint: Buffer; kind: IdempotencyKind },
    ttlHours: number,
    abandonedAfterSeconds: Record<IdempotencyKind, number>,
  ): Promise<boolean> {
    const taken = await this.dataSource.query<Array<{ id: string }>>(
      `INSERT INTO vault_forward_idempotency_keys (id, merchant_account_id, key, key_hashed, fingerprint, kind, expires_at)
         VALUES ($1, $2, $3, true, $4, $5, now() + make_interval(hours => $6))
         ON CONFLICT (merchant_account_id, key) DO UPDATE
            SET id = EXCLUDED.id, key_hashed = true, fingerprint = EXCLUDED.fingerprint, kind = EXCLUDED.kind,
                state = 'running', job_id = NULL,
                ciphertext = NULL, wrapped_key = NULL, master_key_id = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
          WHERE vault_forward_idempotency_keys.expires_at <= now()
             OR (vault_forward_idempotency_keys.state = 'running' AND vault_forward_idempotency_keys.kind = 'sync'
                 AND vault_forward_idempotency_keys.created_at < now() - make_interval(secs => $7))
             OR (vault_forward_idempotency_keys.state = 'running' AND vault_forward_idempotency_keys.kind = 'async'
                 AND vault_forward_idempotency_keys.created_at < now() - make_interval(secs => $8))
         RETURNING id`,
      [
        claim.id,
        claim.merchantAccountId,
        claim.key,
        claim.fingerprint,
        claim.kind,
        ttlHours,
        abandonedAfterSeconds.sync,
        abandonedAfterSeconds.async,
      ],
    );
    return taken.length === 1;
  }

  /** The key's row (by its keyed hash) while it lasts. */
  async find(merchantAccountId: string, keyHash: string): Promise<KeyRow | undefined> {
    const [row] = await this.dataSource.query<KeyRow[]>(
      `SELECT ${KEY_ROW} FROM vault_forward_idempotency_keys
        WHERE merchant_account_id = $1 AND key = $2 AND key_hashed AND expires_at > now()`,
      [merchantAccountId, keyHash],
    );
    return row;
  }

  /** A row written before keys were hashed, by the key in clear, while it lasts. */
  async legacy(merchantAccountId: string, key: string): Promise<KeyRow | undefined> {
    const [row] = await this.dataSource.query<KeyRow[]>(
      `SELECT ${KEY_ROW} FROM vault_forward_idempotency_keys
        WHERE merchant_account_id = $1 AND key = $2 AND NOT key_hashed AND expires_at > now()`,
      [merchantAccountId, key],
    );
    return row;
  }

  /**
   * A legacy row turned into the hashed form: its key replaced by the hash, its fingerprint and sealed
   * answer (when given) by the ones computed under the hash. Only while it is still legacy.
   */
  async upgrade(id: string, keyHash: string, fingerprint: Buffer, sealed: SealedRecord | null): Promise<void> {
    await this.dataSource.query(
      `UPDATE vault_forward_idempotency_keys
          SET key = $2, key_hashed = true, fingerprint = $3,
              ciphertext = COALESCE($4, ciphertext), wrapped_key = COALESCE($5, wrapped_key),
              master_key_id = COALESCE($6, master_key_id)
        WHERE id = $1 AND NOT key_hashed`,
      [id, keyHash, fingerprint, sealed?.ciphertext ?? null, sealed?.wrappedKey ?? null, sealed?.masterKeyId ?? null],
    );
  }

  /** Whether any row that still answers holds its key in clear. */
  async anyLegacy(): Promise<boolean> {
    const [row] = await this.dataSource.query<Array<{ any: boolean }>>(
      `SELECT EXISTS (SELECT 1 FROM vault_forward_idempotency_keys WHERE NOT key_hashed AND expires_at > now()) AS any`,
    );
    return row.any;
  }

  async release(claimIds: string[]): Promise<void> {
    await this.dataSource.query(RELEASE, [claimIds]);
  }

  /** The claim's answer, sealed: the key is done. */
  async complete(claimId: string, sealed: SealedRecord): Promise<void> {
    await this.dataSource.query(
      `UPDATE vault_forward_idempotency_keys SET state = 'done', ciphertext = $2, wrapped_key = $3, master_key_id = $4 WHERE id = $1`,
      [claimId, sealed.ciphertext, sealed.wrappedKey, sealed.masterKeyId],
    );
  }

  /** At most `batch` expired keys deleted (SKIP LOCKED: concurrent purges split the rows); how many. */
  async purgeExpired(batch: number): Promise<number> {
    const result = await this.dataSource.query<[unknown[], number]>(
      `DELETE FROM vault_forward_idempotency_keys WHERE id IN
           (SELECT id FROM vault_forward_idempotency_keys WHERE expires_at <= now() LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [batch],
    );
    return result[1];
  }
}
