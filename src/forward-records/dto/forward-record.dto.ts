import { ApiTimestamp } from '../../common/openapi/properties';
import { ApiProperty } from '@nestjs/swagger';
import { ForwardRecordEntity } from '../forward-record.entity';

export class ForwardRecordResponse {
  @ApiProperty({ type: String, enum: ['vault-forward-request'] })
  type!: 'vault-forward-request';
  @ApiProperty({ description: 'The request id, also returned as x-vault-forward-request-id.' })
  id!: string;
  @ApiProperty()
  merchant_account_id!: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  config_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  method!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Without the query string.' })
  target_url!: string | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 100,
    maximum: 599,
    description: 'The downstream status, or the status of the service’s own error.',
  })
  status!: number | null;
  @ApiProperty({ type: Number, minimum: 0, description: 'Milliseconds, with fractions.' })
  duration_ms!: number;
  @ApiProperty({ type: String, format: 'uuid', isArray: true })
  payment_method_ids!: string[];
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The checkout session whose card was filled in (x-vault-forward-checkout-session).',
  })
  checkout_session_id!: string | null;
  @ApiProperty({ type: String, format: 'uuid', isArray: true })
  authentication_ids!: string[];
  @ApiProperty({
    type: Boolean,
    description:
      'x-vault-forward-merchant-initiated: the merchant, not the cardholder, started the forward (false when the header was not sent).',
  })
  merchant_initiated!: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Problem code when the service answered with its own error.',
  })
  error_type!: string | null;
  @ApiTimestamp()
  created_at!: string;

  static from(r: ForwardRecordEntity): ForwardRecordResponse {
    return {
      type: 'vault-forward-request',
      id: r.id,
      merchant_account_id: r.merchantAccountId,
      config_id: r.configId,
      method: r.method,
      target_url: r.targetUrl,
      status: r.status,
      duration_ms: r.durationMs,
      payment_method_ids: r.paymentMethodIds,
      checkout_session_id: r.checkoutSessionId,
      authentication_ids: r.authenticationIds,
      merchant_initiated: r.merchantInitiated,
      error_type: r.errorType,
      created_at: r.createdAt.toISOString(),
    };
  }
}
