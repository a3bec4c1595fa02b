import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { SecretSealer } from '../../vault/secret-sealer';
import { CreatedWebhookSecretResponse, ListedWebhookSecret, WebhookSecretResponse } from './dto/webhook-secret.dto';
import { WebhookSecret } from './webhook-secret.entity';
import { WebhookSecretEvents } from './webhook-secret-events';
import { formatSecret, newSecretKey, webhookSecretAad } from './webhook-secret-key';
import { WebhookSecretsRepository } from './webhook-secrets.repository';

/** Creation (which rotates) and listing of the merchant account's webhook signing secrets. */
@Injectable()
export class WebhookSecretsService {
  constructor(
    private readonly secrets: WebhookSecretsRepository,
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
      // Whatever waits for a secret (job-end callbacks put off for want of one) is woken with it.
      const afterCommit = await this.secrets.rotateIn(merchantAccountId, id, sealed, (manager) =>
        this.events.secretCreated(manager, merchantAccountId),
      );
      await afterCommit();
      const row = await this.secrets.get(merchantAccountId, id);
      return { ...WebhookSecretResponse.from(this.listed(row)), secret: formatSecret(key) };
    } finally {
      key.fill(0);
    }
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  async list(merchantAccountId: string, keyset: KeysetRequest): Promise<ListedWebhookSecret[]> {
    const rows = await this.secrets.page(merchantAccountId, keyset);
    return rows.map((row) => this.listed(row));
  }

  private listed(row: WebhookSecret): ListedWebhookSecret {
    const nowMicros = BigInt(Math.floor(this.clock.epochMs() * 1000));
    return Object.assign(row, { expired: row.expiresAt !== null && row.expiresAt.toEpochMicros() <= nowMicros });
  }
}
