import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import type { SealedRecord } from '../../vault/envelope';
import { WebhookSecret } from './webhook-secret.entity';
import { ROTATION_OVERLAP_HOURS } from './webhook-secret-key';

interface SigningRow {
  id: string;
  ciphertext: Buffer;
  wrapped_key: Buffer;
  master_key_id: string;
}

/** Every read and write of vault_forward_webhook_secrets. */
@Injectable()
export class WebhookSecretsRepository {
  private readonly keyset: KeysetTable<WebhookSecret>;

  constructor(
    @InjectRepository(WebhookSecret) private readonly secrets: Repository<WebhookSecret>,
    private readonly dataSource: DataSource,
    sql: Sql,
  ) {
    this.keyset = new KeysetTable(sql, secrets.metadata, 's');
  }

  /**
   * Inserts the new current secret and rotates the one before it, in one transaction that `alongside` joins
   * (what it returns is returned once that commits).
   */
  rotateIn<T>(
    merchantAccountId: string,
    id: string,
    sealed: SealedRecord,
    alongside: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      // Serialises concurrent creations for one merchant account: each rotates the one before it.
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('vault-forward-webhook-secrets'), hashtext($1))`, [
        merchantAccountId,
      ]);
      await manager.query(
        `UPDATE vault_forward_webhook_secrets SET rotated_at = now(), expires_at = now() + make_interval(hours => $2)
            WHERE merchant_account_id = $1 AND rotated_at IS NULL`,
        [merchantAccountId, ROTATION_OVERLAP_HOURS],
      );
      await manager.query(
        `INSERT INTO vault_forward_webhook_secrets (id, merchant_account_id, ciphertext, wrapped_key, ` +
          `master_key_id) VALUES ($1, $2, $3, $4, $5)`,
        [id, merchantAccountId, sealed.ciphertext, sealed.wrappedKey, sealed.masterKeyId],
      );
      return alongside(manager);
    });
  }

  get(merchantAccountId: string, id: string): Promise<WebhookSecret> {
    return this.secrets.findOneByOrFail({ id, merchantAccountId });
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  page(merchantAccountId: string, keyset: KeysetRequest): Promise<WebhookSecret[]> {
    return this.keyset.seekPage([where('s.merchant_account_id = ?', merchantAccountId)], keyset);
  }

  /** The secrets that sign now, the current one first. */
  signing(merchantAccountId: string): Promise<SigningRow[]> {
    return this.dataSource.query<SigningRow[]>(
      `SELECT id, ciphertext, wrapped_key, master_key_id FROM vault_forward_webhook_secrets
        WHERE merchant_account_id = $1 AND (expires_at IS NULL OR expires_at > now())
        ORDER BY rotated_at DESC NULLS FIRST, created_at DESC`,
      [merchantAccountId],
    );
  }
}
