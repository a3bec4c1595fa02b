import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { KeysetRequest, seekPage } from '../../../platform/pagination/keyset';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { SecretSealer } from '../../vault/secret-sealer';
import { CreatedWebhookSecretResponse, ListedWebhookSecret, WebhookSecretResponse } from './dto/webhook-secret.dto';
import { WebhookSecret } from './webhook-secret.entity';
import { WebhookSecretEvents } from './webhook-secret-events';
import { formatSecret, newSecretKey, ROTATION_OVERLAP_HOURS, webhookSecretAad } from './webhook-secret-key';

/** Creation (which rotates) and listing of the merchant account's webhook signing secrets. */
@Injectable()
export class WebhookSecretsService {
  constructor(
    @InjectRepository(WebhookSecret) private readonly secrets: Repository<WebhookSecret>,
    private readonly dataSource: DataSource,
    private readonly sealer: SecretSealer,
    private readonly events: WebhookSecretEvents,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * A new current secret; the one it replaces keeps signing for ROTATION_OVERLAP_HOURS. The secret
   * is returned here and never again: only its sealed bytes are stored.
   */
  async create(merchantAccountId: string): Promise<CreatedWebhookSecretResponse> {
    const id = randomUUID();
    const key = newSecretKey();
    try {
      const sealed = this.sealer.seal(webhookSecretAad(merchantAccountId, id), key);
      const afterCommit = await this.dataSource.transaction(async (manager) => {
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
        // Whatever waits for a secret (job-end callbacks put off for want of one) is woken with it.
        return this.events.secretCreated(manager, merchantAccountId);
      });
      await afterCommit();
      const row = await this.secrets.findOneByOrFail({ id, merchantAccountId });
      return { ...WebhookSecretResponse.from(this.listed(row)), secret: formatSecret(key) };
    } finally {
      key.fill(0);
    }
  }

  /** One page, as `seekPage` fetches it (up to keyset.limit + 1 rows). */
  async list(merchantAccountId: string, keyset: KeysetRequest): Promise<ListedWebhookSecret[]> {
    const rows = await seekPage(
      this.secrets.createQueryBuilder('s').where('s.merchant_account_id = :merchantAccountId', { merchantAccountId }),
      's',
      keyset,
    );
    return rows.map((row) => this.listed(row));
  }

  private listed(row: WebhookSecret): ListedWebhookSecret {
    const nowMicros = BigInt(Math.floor(this.clock.epochMs() * 1000));
    return Object.assign(row, { expired: row.expiresAt !== null && row.expiresAt.toEpochMicros() <= nowMicros });
  }
}
