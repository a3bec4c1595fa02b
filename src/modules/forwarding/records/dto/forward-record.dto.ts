import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty } from '@nestjs/swagger';
import { ForwardRecordEntity } from '../forward-record.entity';
import type { OpenedBodies } from '../sealed-bodies';
import type { Timestamp } from '../../../../platform/database/timestamp';

/** `at` plus whole days, in the API's timestamp form (microseconds, `+00:00`). */
function daysAfter(at: Timestamp, days: number): string {
  const micros = at.toEpochMicros() + BigInt(days) * 86_400_000_000n;
  const iso = new Date(Number(micros / 1000n)).toISOString();
  return `${iso.slice(0, -1)}${String(micros % 1000n).padStart(3, '0')}+00:00`;
}

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

/**
 * One record read by its id: the list's fields and, when its config asked for them (`record_bodies`, decision
 * 0138) and for the days it said, the redacted request and answer (decision 0104). Additive to Gr4vy's shape: its
 * clients ignore them.
 */
export class ForwardRecordDetailResponse extends ForwardRecordResponse {
  @ApiProperty({
    type: Boolean,
    description:
      'Whether this record kept the request and answer: its config had `record_bodies` on when the forward was ' +
      'sent (and it got as far as sending). Stays true once the bodies are erased past bodies_kept_until.',
  })
  bodies_recorded!: boolean;
  @ApiTimestamp({
    nullable: true,
    description:
      'When the purge erases the bodies (the record stays): created_at plus the config’s ' +
      '`record_bodies_retention_days`, at most 30 days. Null when none were recorded.',
  })
  bodies_kept_until!: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    description:
      'The forwarded headers by lower-case name: the value as sent, in placeholder form for a header filled from ' +
      'x-vault-forward-header-*, and "[Redacted]" for secret-bearing headers (Authorization, API keys, cookies, ' +
      'anything an authentication method set). Null when not recorded (refused before sending, the config’s ' +
      '`record_bodies` off) or past the retention.',
  })
  request_headers!: Record<string, string> | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The request body as sent, each filled value replaced by its placeholder text ({{ CARD_NUMBER_1 }}), card ' +
      'numbers masked, at most 65536 bytes (request_body_truncated). Before a jwe-payload method encrypted it. ' +
      'Null when there was none, when not recorded or past the retention.',
  })
  request_body!: string | null;
  @ApiProperty({ type: Boolean, description: 'The request body was longer than 65536 bytes and is cut there.' })
  request_body_truncated!: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The downstream’s answer as returned to the caller: after the config’s response rules, card numbers ' +
      'masked, at most 65536 bytes (response_body_truncated). Null when there was no answer (or it was withheld), ' +
      'when not recorded or past the retention.',
  })
  response_body!: string | null;
  @ApiProperty({ type: Boolean, description: 'The answer was longer than 65536 bytes and is cut there.' })
  response_body_truncated!: boolean;

  static detail(r: ForwardRecordEntity, bodies: OpenedBodies): ForwardRecordDetailResponse {
    const days = r.bodiesRetentionDays ?? null;
    return {
      ...ForwardRecordResponse.from(r),
      bodies_recorded: days !== null || r.wrappedKey !== null,
      bodies_kept_until: days === null ? null : daysAfter(r.createdAt, days),
      request_headers: bodies.request_headers,
      request_body: bodies.request_body,
      request_body_truncated: r.requestBodyTruncated === true,
      response_body: bodies.response_body,
      response_body_truncated: r.responseBodyTruncated === true,
    };
  }
}
