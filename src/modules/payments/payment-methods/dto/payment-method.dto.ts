import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, IsUUID, Length, ValidateIf } from 'class-validator';
import { BuyerResponse } from '../../buyers/dto/buyer.dto';
import { PageQuery } from '../../../../platform/pagination/page-query';
import { Passes } from '../../../../platform/http/passes';
import {
  CARDHOLDER_NAME_MAX_LENGTH,
  cardholderNameProblem,
  cardNumberProblem,
  CardScheme,
  EXPIRATION_DATE_PATTERN,
  expirationDateProblem,
} from '../../../vault/card';
import { PaymentMethod } from '../payment-method.entity';

/** Gr4vy's payment method statuses; a stored card is always `succeeded` (the others belong to redirect methods). */
export const PAYMENT_METHOD_STATUSES = [
  'processing',
  'buyer_approval_required',
  'succeeded',
  'failed',
  'paused',
] as const;
export type PaymentMethodStatus = (typeof PAYMENT_METHOD_STATUSES)[number];

const isCard = (o: CreatePaymentMethodDto) => o.method !== 'checkout-session';
const isSession = (o: CreatePaymentMethodDto) => o.method === 'checkout-session';

export class CreatePaymentMethodDto {
  @ApiProperty({
    type: String,
    enum: ['card', 'checkout-session'],
    description: '`checkout-session` stores the card of the session named by `id` (never its security code).',
  })
  @IsIn(['card', 'checkout-session'])
  method!: 'card' | 'checkout-session';

  @ApiPropertyOptional({
    example: '4111 1111 1111 1111',
    description: 'With method card (required): 12–19 digits (spaces and dashes ignored), Luhn-valid. Never returned.',
  })
  @ValidateIf((o: CreatePaymentMethodDto) => isCard(o) || o.number !== undefined)
  @Passes('isCardNumber', cardNumberProblem)
  number!: string;

  @ApiPropertyOptional({
    example: '12/30',
    pattern: EXPIRATION_DATE_PATTERN.source,
    description: 'With method card (required).',
  })
  @ValidateIf((o: CreatePaymentMethodDto) => isCard(o) || o.expiration_date !== undefined)
  @Passes('isExpirationDate', expirationDateProblem)
  expiration_date!: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'With method checkout-session (required): the session whose card is stored.',
  })
  @ValidateIf((o: CreatePaymentMethodDto) => isSession(o) || o.id !== undefined)
  @IsUUID('all')
  id?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'A buyer of the same merchant account. At most one of buyer_id and buyer_external_identifier.',
  })
  @IsOptional()
  @IsUUID('all')
  buyer_id?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description: 'The buyer of this merchant account with this external_identifier (404 buyer-not-found if none).',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  buyer_external_identifier?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  external_identifier?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: CARDHOLDER_NAME_MAX_LENGTH,
    description: 'Stored encrypted; fills {{ CARDHOLDER_NAME_X }}. No control characters. Never returned.',
  })
  @IsOptional()
  @Passes('isCardholderName', cardholderNameProblem)
  cardholder_name?: string;
}

/** One value or the same parameter repeated (`status=a&status=b`, as the SDK sends arrays): always a list. */
const asList = ({ value }: { value: unknown }) => (typeof value === 'string' ? [value] : value);

export class ListPaymentMethodsQuery extends PageQuery {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only the payment methods of this buyer.' })
  @IsOptional()
  @IsUUID('all')
  buyer_id?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description: 'Only the payment methods of the buyer with this external_identifier (none if no such buyer).',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  buyer_external_identifier?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description: 'Exact external_identifier of the payment method.',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  external_identifier?: string;

  @ApiPropertyOptional({
    type: [String],
    enum: PAYMENT_METHOD_STATUSES,
    isArray: true,
    description:
      'Only payment methods in one of these statuses; repeat the parameter for several. Stored cards are always `succeeded`.',
  })
  @IsOptional()
  @Transform(asList)
  @IsArray()
  @ArrayMaxSize(PAYMENT_METHOD_STATUSES.length)
  @IsIn(PAYMENT_METHOD_STATUSES, { each: true })
  status?: PaymentMethodStatus[];
}

/** The status filter as a set: repeated or reordered values filter (and bind a cursor) alike. */
export function statusFilter(query: ListPaymentMethodsQuery): PaymentMethodStatus[] | undefined {
  return query.status === undefined ? undefined : [...new Set(query.status)].sort();
}

/** What a cursor of GET /payment-methods is bound to: the filters in a normal form (a UUID in any case). */
export function paymentMethodCursorFilters(query: ListPaymentMethodsQuery) {
  return {
    buyer_id: query.buyer_id?.toLowerCase(),
    buyer_external_identifier: query.buyer_external_identifier,
    external_identifier: query.external_identifier,
    status: statusFilter(query)?.join(','),
  };
}

/** `GET /buyers/payment-methods`: exactly one of buyer_id and buyer_external_identifier (checked by the service). */
export class ListBuyerPaymentMethodsQuery {
  @ApiPropertyOptional({ format: 'uuid', description: 'The buyer; give this or buyer_external_identifier.' })
  @IsOptional()
  @IsUUID('all')
  buyer_id?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description: 'The buyer with this external_identifier; give this or buyer_id.',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  buyer_external_identifier?: string;

  @ApiPropertyOptional({
    type: String,
    enum: ['last_used_at'],
    description: 'Sort by when the card was last used in a forward; default: by creation time.',
  })
  @IsOptional()
  @IsIn(['last_used_at'])
  sort_by?: 'last_used_at';

  @ApiPropertyOptional({
    type: String,
    enum: ['asc', 'desc'],
    default: 'desc',
    description: 'desc: most recent first, never-used cards last; asc: the exact reverse.',
  })
  @IsOptional()
  @IsIn(['asc', 'desc'])
  order_by?: 'asc' | 'desc';
}

export class PaymentMethodDetailsResponse {
  @ApiProperty({
    type: String,
    nullable: true,
    example: '411111',
    description:
      "First six digits, for numbers of 15 digits or more (the card schemes' truncation rules); null for shorter " +
      'numbers and for cards stored before this field existed.',
  })
  bin!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['credit', 'debit', 'prepaid'],
    description: 'Always null: the vault has no BIN table to tell credit, debit and prepaid apart.',
  })
  card_type!: 'credit' | 'debit' | 'prepaid' | null;
}

/**
 * A stored card as `GET /buyers/payment-methods` lists it (Gr4vy's PaymentMethodSummary): what the
 * card is and how it was used, without its buyer or merchant reference.
 */
export class PaymentMethodSummaryResponse {
  @ApiProperty({ type: String, enum: ['payment-method'] })
  type!: 'payment-method';
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'default' })
  merchant_account_id!: string;
  @ApiProperty({ type: String, enum: ['card'] })
  method!: 'card';
  @ApiProperty({
    type: String,
    enum: ['visa', 'mastercard', 'amex', 'discover', 'jcb', 'diners', 'unionpay', 'maestro', 'unknown'],
  })
  scheme!: CardScheme;
  @ApiProperty({ example: '1111', description: 'Last four digits.' })
  label!: string;
  @ApiProperty({ example: '12/30' })
  expiration_date!: string;
  @ApiProperty({
    description: 'Keyed HMAC of the number: equal for the same card within a merchant account, not reversible.',
  })
  fingerprint!: string;
  @ApiProperty({ type: PaymentMethodDetailsResponse })
  details!: PaymentMethodDetailsResponse;
  @ApiProperty({
    type: Number,
    example: 3,
    description:
      "Forwards that released this card's data to a downstream (queued attempts each count). Eventually " +
      'consistent: written with the forward records, within about 50 ms of the answer.',
  })
  usage_count!: number;
  @ApiTimestamp({ nullable: true, description: 'When the last counted forward started; null if never used.' })
  last_used_at!: string | null;
  @ApiProperty({
    type: Number,
    enum: [0],
    description: 'Always 0: the vault does not tell client-initiated forwards apart.',
  })
  cit_usage_count!: 0;
  @ApiProperty({ type: Boolean, enum: [false], description: 'Always false: there is no account updater.' })
  has_replacement!: false;
  @ApiTimestamp()
  created_at!: string;
  @ApiTimestamp()
  updated_at!: string;

  static from(pm: PaymentMethod): PaymentMethodSummaryResponse {
    return {
      type: 'payment-method',
      id: pm.id,
      merchant_account_id: pm.merchantAccountId,
      method: pm.method,
      scheme: pm.scheme,
      label: pm.label,
      expiration_date: pm.expirationDate,
      fingerprint: pm.fingerprint,
      details: { bin: pm.bin, card_type: null },
      usage_count: pm.usageCount,
      last_used_at: pm.lastUsedAt?.toISOString() ?? null,
      cit_usage_count: 0,
      has_replacement: false,
      created_at: pm.createdAt.toISOString(),
      updated_at: pm.updatedAt.toISOString(),
    };
  }
}

export class PaymentMethodResponse extends PaymentMethodSummaryResponse {
  @ApiProperty({
    type: String,
    enum: PAYMENT_METHOD_STATUSES,
    example: 'succeeded',
    description: 'Always `succeeded` for a stored card.',
  })
  status!: PaymentMethodStatus;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  buyer_id!: string | null;
  @ApiProperty({ type: BuyerResponse, nullable: true, description: 'The buyer the card is stored for, or null.' })
  buyer!: BuyerResponse | null;
  @ApiProperty({ type: String, nullable: true })
  external_identifier!: string | null;

  static override from(pm: PaymentMethod): PaymentMethodResponse {
    if (pm.buyerId !== null && pm.buyer === undefined)
      throw new Error(`payment method ${pm.id} was loaded without its buyer`); // a bug
    return {
      ...PaymentMethodSummaryResponse.from(pm),
      status: 'succeeded',
      buyer_id: pm.buyerId,
      buyer: pm.buyer ? BuyerResponse.from(pm.buyer) : null,
      external_identifier: pm.externalIdentifier,
    };
  }
}

export class BuyerPaymentMethodsResponse {
  @ApiProperty({ type: [PaymentMethodSummaryResponse], description: 'At most 100 cards, in the order asked for.' })
  items!: PaymentMethodSummaryResponse[];
}
