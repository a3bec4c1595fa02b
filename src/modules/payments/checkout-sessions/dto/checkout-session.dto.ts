import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { Passes } from '../../../../platform/http/passes';
import { cardNumberProblem, CardScheme, EXPIRATION_DATE_PATTERN, expirationDateProblem } from '../../../vault/card';
import { CheckoutSession } from '../checkout-session.entity';

export const MAX_EXPIRES_IN_SECONDS = 3600;
export const METADATA_LIMITS = { keys: 20, keyLength: 40, valueLength: 500 } as const;

/** Why metadata is refused, or null: a flat object of at most 20 string values (keys ≤ 40, values ≤ 500 characters). */
export function metadataProblem(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return 'must be an object of strings';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > METADATA_LIMITS.keys) return `must have at most ${METADATA_LIMITS.keys} keys`;
  for (const [key, item] of entries) {
    if (key.length < 1 || key.length > METADATA_LIMITS.keyLength)
      return `keys must be 1 to ${METADATA_LIMITS.keyLength} characters`;
    if (typeof item !== 'string') return 'values must be strings';
    if (item.length > METADATA_LIMITS.valueLength)
      return `values must be at most ${METADATA_LIMITS.valueLength} characters`;
  }
  return null;
}

const METADATA_SCHEMA = {
  type: 'object',
  nullable: true,
  maxProperties: METADATA_LIMITS.keys,
  additionalProperties: { type: 'string', maxLength: METADATA_LIMITS.valueLength },
  description:
    `At most ${METADATA_LIMITS.keys} keys of 1–${METADATA_LIMITS.keyLength} characters, string values of at most ` +
    `${METADATA_LIMITS.valueLength}. Never card data.`,
} as const;

/** POST /checkout/sessions and PUT /checkout/sessions/{id}: the SDK's CheckoutSessionCreate, as far as this service has its features. */
export class CheckoutSessionCreateDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_EXPIRES_IN_SECONDS,
    default: MAX_EXPIRES_IN_SECONDS,
    description:
      'Seconds until the session and its card data expire. On update, counted from now, but never past an hour after creation.',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_EXPIRES_IN_SECONDS)
  expires_in?: number;

  @ApiPropertyOptional(METADATA_SCHEMA)
  @IsOptional()
  @Passes('isMetadata', metadataProblem)
  metadata?: Record<string, string> | null;
}

export class CheckoutSessionFieldsPaymentMethodDto {
  @ApiProperty({
    enum: ['card', 'id'],
    description: '`card`: a new card; `id`: a stored payment method of this merchant account.',
  })
  @IsIn(['card', 'id'])
  method!: 'card' | 'id';

  @ApiPropertyOptional({
    example: '4111 1111 1111 1111',
    description: 'With method card: 12–19 digits, Luhn-valid. Encrypted; never returned.',
  })
  @ValidateIf((o: CheckoutSessionFieldsPaymentMethodDto) => o.method === 'card' || o.number !== undefined)
  @Passes('isCardNumber', cardNumberProblem)
  number?: string;

  @ApiPropertyOptional({ example: '12/30', pattern: EXPIRATION_DATE_PATTERN.source, description: 'With method card.' })
  @ValidateIf((o: CheckoutSessionFieldsPaymentMethodDto) => o.method === 'card' || o.expiration_date !== undefined)
  @Passes('isExpirationDate', expirationDateProblem)
  expiration_date?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'With method id: the stored payment method.' })
  @ValidateIf((o: CheckoutSessionFieldsPaymentMethodDto) => o.method === 'id' || o.id !== undefined)
  @IsUUID('all')
  id?: string;

  @ApiProperty({
    example: '123',
    pattern: '^[0-9]{3,4}$',
    description: '3 digits (4 for American Express). Encrypted; erased after use or at expiry; never returned.',
  })
  @IsString()
  @Matches(/^[0-9]{3,4}$/, { message: 'must be 3 or 4 digits' })
  security_code!: string;
}

/** PUT /checkout/sessions/{id}/fields. */
export class CheckoutSessionFieldsDto {
  @ApiProperty({ type: CheckoutSessionFieldsPaymentMethodDto })
  @IsObject()
  @ValidateNested()
  @Type(() => CheckoutSessionFieldsPaymentMethodDto)
  payment_method!: CheckoutSessionFieldsPaymentMethodDto;
}

const SCHEMES = ['visa', 'mastercard', 'amex', 'discover', 'jcb', 'diners', 'unionpay', 'maestro', 'unknown'];

/** The card of a session as shown: never its number or security code. */
export class CheckoutSessionPaymentMethodResponse {
  @ApiProperty({ enum: ['payment-method'] })
  type!: 'payment-method';
  @ApiProperty({ enum: ['card'] })
  method!: 'card';
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The stored payment method, when the card was given by id.',
  })
  id!: string | null;
  @ApiProperty({ example: '1111', description: 'Last four digits.' })
  label!: string;
  @ApiProperty({ enum: SCHEMES })
  scheme!: CardScheme;
  @ApiProperty({ example: '12/30' })
  expiration_date!: string;
}

export class CheckoutSessionResponse {
  @ApiProperty({ enum: ['checkout-session'] })
  type!: 'checkout-session';
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'default' })
  merchant_account_id!: string;
  @ApiProperty({ ...METADATA_SCHEMA, nullable: true })
  metadata!: Record<string, string> | null;
  @ApiTimestamp()
  expires_at!: string;
  @ApiProperty({
    type: CheckoutSessionPaymentMethodResponse,
    nullable: true,
    description: 'Null until a card is collected with PUT /checkout/sessions/{id}/fields.',
  })
  payment_method!: CheckoutSessionPaymentMethodResponse | null;
  @ApiTimestamp()
  created_at!: string;
  @ApiTimestamp()
  updated_at!: string;

  static from(s: CheckoutSession): CheckoutSessionResponse {
    const card =
      s.cardSource !== null &&
      s.label !== null &&
      s.scheme !== null &&
      s.expirationDate !== null &&
      (s.cardSource === 'card' || s.paymentMethodId !== null);
    return {
      type: 'checkout-session',
      id: s.id,
      merchant_account_id: s.merchantAccountId,
      metadata: s.metadata,
      expires_at: s.expiresAt.toISOString(),
      payment_method: card
        ? {
            type: 'payment-method',
            method: 'card',
            id: s.cardSource === 'id' ? s.paymentMethodId : null,
            label: s.label!,
            scheme: s.scheme!,
            expiration_date: s.expirationDate!,
          }
        : null,
      created_at: s.createdAt.toISOString(),
      updated_at: s.updatedAt.toISOString(),
    };
  }
}
