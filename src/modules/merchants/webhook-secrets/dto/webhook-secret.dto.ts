import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty } from '@nestjs/swagger';
import { WebhookSecret } from '../webhook-secret.entity';

type WebhookSecretStatus = 'active' | 'rotated' | 'expired';

/** A secret as listed: whether it expired, by the service's clock when it was read. */
export type ListedWebhookSecret = WebhookSecret & { expired: boolean };

export class WebhookSecretResponse {
  @ApiProperty({ type: String, enum: ['vault-forward-webhook-secret'] })
  type!: 'vault-forward-webhook-secret';
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({
    type: String,
    enum: ['active', 'rotated', 'expired'],
    description:
      '`active`: the current secret; `rotated`: replaced by a newer one, still signing until expires_at; `expired`: signs no more.',
  })
  status!: WebhookSecretStatus;
  @ApiTimestamp()
  created_at!: string;
  @ApiTimestamp({
    nullable: true,
    description: '24 hours after a newer secret replaced this one; null for the active secret.',
  })
  expires_at!: string | null;

  static from(this: void, row: ListedWebhookSecret): WebhookSecretResponse {
    return {
      type: 'vault-forward-webhook-secret',
      id: row.id,
      status: row.expiresAt === null ? 'active' : row.expired ? 'expired' : 'rotated',
      created_at: row.createdAt.toISOString(),
      expires_at: row.expiresAt?.toISOString() ?? null,
    };
  }
}

export class CreatedWebhookSecretResponse extends WebhookSecretResponse {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description:
      'Shown once, in this response only: `whsec_` and the base64 of 32 random bytes. Verify callbacks with it (Standard Webhooks).',
  })
  secret!: string;
}
