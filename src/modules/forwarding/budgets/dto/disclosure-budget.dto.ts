import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { PLACEHOLDER_NAMES } from '../../../vault/placeholders/placeholders';
import type { DisclosureBudgetRow } from '../disclosure-budgets.repository';

const MAX_LIMIT = 100_000_000;
const WINDOW_DOC = 'The window the limits count in, in seconds (60 to 86400): fixed windows aligned to their length.';
const DISTINCT_DOC =
  'Distinct cards (payment methods, or checkout sessions) that may be disclosed in one window; null: the default ' +
  '(merchant-wide) or no limit of this kind (a config).';
const PER_CARD_DOC =
  'How often one card may be disclosed in one window; null: the default (merchant-wide) or no limit (a config).';

/** The limits both kinds of budget have. */
class BudgetLimits {
  @ApiPropertyOptional({ minimum: 60, maximum: 86_400, default: 3_600, description: WINDOW_DOC })
  @IsOptional()
  @IsInt({ message: 'must be a whole number of seconds from 60 to 86400' })
  @Min(60, { message: 'must be a whole number of seconds from 60 to 86400' })
  @Max(86_400, { message: 'must be a whole number of seconds from 60 to 86400' })
  window_seconds?: number;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 1, maximum: MAX_LIMIT, description: DISTINCT_DOC })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsInt({ message: `must be a whole number from 1 to ${MAX_LIMIT}, or null` })
  @Min(1, { message: `must be a whole number from 1 to ${MAX_LIMIT}, or null` })
  @Max(MAX_LIMIT, { message: `must be a whole number from 1 to ${MAX_LIMIT}, or null` })
  distinct_cards?: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 1, maximum: MAX_LIMIT, description: PER_CARD_DOC })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsInt({ message: `must be a whole number from 1 to ${MAX_LIMIT}, or null` })
  @Min(1, { message: `must be a whole number from 1 to ${MAX_LIMIT}, or null` })
  @Max(MAX_LIMIT, { message: `must be a whole number from 1 to ${MAX_LIMIT}, or null` })
  disclosures_per_card?: number | null;
}

/** PUT /vault-forward/budget: the merchant account's budget over all its configs. */
export class PutMerchantBudgetDto extends BudgetLimits {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 2048,
    example: 'https://alerts.example.com/vault',
    description:
      'Where the signed `disclosure_budget.exceeded` event goes (Standard Webhooks, signed with the webhook ' +
      'secrets of POST /vault-forward/webhook-secrets), once per budget and window. https, unless the operator ' +
      'lists the host in FORWARD_INSECURE_HOSTS.',
  })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsString()
  @MaxLength(2048)
  webhook_url?: string | null;
}

/** PUT /vault-forward/configs/{id}/budget: one config's budget, and the placeholders it may fill. */
export class PutConfigBudgetDto extends BudgetLimits {
  @ApiPropertyOptional({
    type: String,
    isArray: true,
    nullable: true,
    enum: PLACEHOLDER_NAMES,
    example: ['CARD_EXPIRATION_DATE', 'CARDHOLDER_NAME'],
    description:
      'The placeholder names (without the _X position) this config may fill; any other is refused with 400 ' +
      'placeholder-not-allowed. A name allows its `_OR_EMPTY_STRING` twin. null or absent: every placeholder.',
  })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsArray()
  @ArrayMaxSize(PLACEHOLDER_NAMES.length)
  @ArrayUnique()
  @IsIn(PLACEHOLDER_NAMES, { each: true, message: 'each must be a placeholder name, such as CARD_EXPIRATION_DATE' })
  allowed_placeholders?: string[] | null;
}

export class DisclosureBudgetResponse {
  @ApiProperty({ type: String, enum: ['vault-forward-disclosure-budget'] })
  type!: 'vault-forward-disclosure-budget';
  @ApiProperty({ type: String, enum: ['merchant', 'config'] })
  scope!: 'merchant' | 'config';
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  config_id!: string | null;
  @ApiProperty({ description: WINDOW_DOC })
  window_seconds!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'In effect: the default where none was set (merchant).' })
  distinct_cards!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'In effect: the default where none was set (merchant).' })
  disclosures_per_card!: number | null;
  @ApiProperty({ type: String, isArray: true, nullable: true, description: 'A config’s allow-list; null: all.' })
  allowed_placeholders!: string[] | null;
  @ApiProperty({ type: String, nullable: true, description: 'The merchant budget’s event URL.' })
  webhook_url!: string | null;
  @ApiProperty({ description: 'false while nothing was set: the defaults apply.' })
  set!: boolean;

  static from(
    this: void,
    configId: string | null,
    row: DisclosureBudgetRow | null,
    defaults: { window_seconds: number; distinct_cards: number | null; disclosures_per_card: number | null },
  ): DisclosureBudgetResponse {
    return {
      type: 'vault-forward-disclosure-budget',
      scope: configId === null ? 'merchant' : 'config',
      config_id: configId,
      window_seconds: row?.window_seconds ?? defaults.window_seconds,
      distinct_cards: row?.distinct_cards ?? defaults.distinct_cards,
      disclosures_per_card: row?.disclosures_per_card ?? defaults.disclosures_per_card,
      allowed_placeholders: row?.allowed_placeholders ?? null,
      webhook_url: row?.webhook_url ?? null,
      set: row !== null,
    };
  }
}
