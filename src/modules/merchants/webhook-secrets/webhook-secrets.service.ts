import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { KeysetRequest, seekPage } from '../../../platform/pagination/keyset';
import { DueDelivery, enqueueDeliveries } from '../../forwarding/callbacks/callback-jobs';
import { CALLBACK_QUEUE, ForwardQueue } from '../../../platform/job-queue/forward-queue';
import { SecretSealer } from '../../vault/secret-sealer';
import { CreatedWebhookSecretResponse, WebhookSecretResponse } from './dto/webhook-secret.dto';
import { WebhookSecret } from './webhook-secret.entity';
import { formatSecret, newSecretKey, ROTATION_OVERLAP_HOURS, webhookSecretAad } from './webhook-secret-key';

/** Creation (which rotates) and listing of the merchant account's webhook signing secrets. */
@Injectable()
export class WebhookSecretsService {
  private readonly logger = new Logger('Callbacks');

  constructor(
    @InjectRepository(WebhookSecret) private readonly secrets: Repository<WebhookSecret>,
    private readonly dataSource: DataSource,
    private readonly sealer: SecretSealer,
    @Optional() @Inject(CALLBACK_QUEUE) private readonly queue?: ForwardQueue,
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
      const woken = await this.dataSource.transaction(async (manager) => {
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
        // Job-end callbacks put off for want of a secret (CallbackDeliveries.waitForSecret) are due
        // now: their attempt is enqueued once this commits (or, the queue down, by the housekeeping).
        const [rows] = await manager.query<[DueDelivery[], number]>(
          `UPDATE vault_forward_callback_deliveries SET next_attempt_at = now()
            WHERE merchant_account_id = $1 AND state = 'pending' AND next_attempt_at = 'infinity'
            RETURNING id, attempts + 1 AS attempt`,
          [merchantAccountId],
        );
        return rows;
      });
      await enqueueDeliveries(this.queue, woken, this.logger, { wake: true });
      const row = await this.secrets.findOneByOrFail({ id, merchantAccountId });
      return { ...WebhookSecretResponse.from(row), secret: formatSecret(key) };
    } finally {
      key.fill(0);
    }
  }

  /** One page, as `seekPage` fetches it (up to keyset.limit + 1 rows). */
  list(merchantAccountId: string, keyset: KeysetRequest): Promise<WebhookSecret[]> {
    return seekPage(
      this.secrets.createQueryBuilder('s').where('s.merchant_account_id = :merchantAccountId', { merchantAccountId }),
      's',
      keyset,
    );
  }
}
