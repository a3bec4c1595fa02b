import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateIf,
} from 'class-validator';
import { Passes } from '../../../../platform/http/passes';
import { MAX_SECURE_FIELDS_ORIGINS, secureFieldsOriginsProblem } from '../secure-fields-origins';
import { MerchantAccount } from '../merchant-account.entity';
import { MERCHANT_ACCOUNT_ID_PATTERN } from '../merchant-account-id';

/** Gr4vy merchant account settings that switch a feature on or off; the SDK sends the two booleans always. */
export const FEATURE_SWITCHES = ['account_updater_enabled', 'async_network_tokens_enabled'] as const;
/** Gr4vy merchant account settings that configure a feature this service does not have: only null is accepted. */
export const FEATURE_SETTINGS = [
  'account_updater_request_encryption_key',
  'account_updater_request_encryption_key_id',
  'account_updater_response_decryption_key',
  'account_updater_response_decryption_key_id',
  'over_capture_amount',
  'over_capture_percentage',
  'loon_client_key',
  'loon_secret_key',
  'loon_accepted_schemes',
  'visa_network_tokens_requestor_id',
  'visa_network_tokens_app_id',
  'amex_network_tokens_requestor_id',
  'amex_network_tokens_app_id',
  'mastercard_network_tokens_requestor_id',
  'mastercard_network_tokens_app_id',
] as const;
type FeatureSwitch = (typeof FEATURE_SWITCHES)[number];
type FeatureSetting = (typeof FEATURE_SETTINGS)[number];
export type MerchantAccountFeatures = Partial<Record<FeatureSwitch, boolean> & Record<FeatureSetting, unknown>>;

/** What every merchant account answers for those features: switched off, not configured. */
const FEATURES_OFF = Object.fromEntries([
  ...FEATURE_SWITCHES.map((name) => [name, false]),
  ...FEATURE_SETTINGS.map((name) => [name, null]),
]) as Record<FeatureSwitch, false> & Record<FeatureSetting, null>;

const OFF =
  'Accepted as false only: this service has no such feature (true is 422 merchant-account-feature-unavailable).';
const NONE =
  'Accepted as null only: this service has no such feature (any other value is 422 merchant-account-feature-unavailable).';

/**
 * What the Gr4vy SDK's MerchantAccountCreate / MerchantAccountUpdate may carry for features this
 * service does not have. Off (false) and none (null) are true of every merchant account here and are
 * accepted; a value that would turn one on is refused by MerchantAccountsService with a 422.
 */
class MerchantAccountFeaturesDto implements MerchantAccountFeatures {
  @ApiPropertyOptional({ type: Boolean, enum: [false], description: OFF })
  @IsOptional()
  @IsBoolean()
  account_updater_enabled?: boolean;

  @ApiPropertyOptional({ type: Boolean, enum: [false], description: OFF })
  @IsOptional()
  @IsBoolean()
  async_network_tokens_enabled?: boolean;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  account_updater_request_encryption_key?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  account_updater_request_encryption_key_id?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  account_updater_response_decryption_key?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  account_updater_response_decryption_key_id?: unknown;

  @ApiPropertyOptional({ type: Number, nullable: true, description: NONE })
  @Allow()
  over_capture_amount?: unknown;

  @ApiPropertyOptional({ type: Number, nullable: true, description: NONE })
  @Allow()
  over_capture_percentage?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  loon_client_key?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  loon_secret_key?: unknown;

  @ApiPropertyOptional({ type: [String], nullable: true, description: NONE })
  @Allow()
  loon_accepted_schemes?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  visa_network_tokens_requestor_id?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  visa_network_tokens_app_id?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  amex_network_tokens_requestor_id?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  amex_network_tokens_app_id?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  mastercard_network_tokens_requestor_id?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: NONE })
  @Allow()
  mastercard_network_tokens_app_id?: unknown;
}

const SECURE_FIELDS_ORIGINS_DESCRIPTION =
  'Web origins (scheme://host[:port]) whose pages may embed this merchant’s Secure Fields: https, or http for ' +
  `localhost and *.localhost; at most ${MAX_SECURE_FIELDS_ORIGINS}, stored normalised (lowercase, default port ` +
  'dropped). Not part of Gr4vy’s merchant account; see docs/checkout-sessions.md.';

/** The one field of this service's own that a merchant account adds to Gr4vy's shape (decision 0140). */
class MerchantAccountWritableDto extends MerchantAccountFeaturesDto {
  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_SECURE_FIELDS_ORIGINS,
    example: ['https://shop.example.com'],
    description: SECURE_FIELDS_ORIGINS_DESCRIPTION,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_SECURE_FIELDS_ORIGINS)
  @Passes('areSecureFieldsOrigins', secureFieldsOriginsProblem)
  secure_fields_origins?: string[];
}

export class CreateMerchantAccountDto extends MerchantAccountWritableDto {
  @ApiProperty({ example: 'acme-eu', pattern: MERCHANT_ACCOUNT_ID_PATTERN.source })
  @IsString()
  @Matches(MERCHANT_ACCOUNT_ID_PATTERN, {
    message: 'must be a slug: lowercase letters, digits and dashes, 1–64 characters',
  })
  id!: string;

  @ApiProperty({ example: 'ACME Europe', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  display_name!: string;
}

export class UpdateMerchantAccountDto extends MerchantAccountWritableDto {
  @ApiPropertyOptional({ example: 'ACME Europe', minLength: 1, maxLength: 200 })
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @Length(1, 200)
  display_name?: string;
}

export class MerchantAccountResponse {
  @ApiProperty({ type: String, enum: ['merchant-account'] })
  type!: 'merchant-account';

  @ApiProperty({ example: 'acme-eu' })
  id!: string;

  @ApiProperty({ example: 'ACME Europe' })
  display_name!: string;

  @ApiProperty({ type: Boolean, enum: [false], description: 'Always false: there is no account updater.' })
  account_updater_enabled!: false;

  @ApiProperty({ type: Boolean, enum: [false], description: 'Always false: there are no network tokens.' })
  async_network_tokens_enabled!: false;

  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  account_updater_request_encryption_key!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  account_updater_request_encryption_key_id!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  account_updater_response_decryption_key!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  account_updater_response_decryption_key_id!: null;
  @ApiProperty({ type: Number, nullable: true, description: 'Always null: no over-capture.' })
  over_capture_amount!: null;
  @ApiProperty({ type: Number, nullable: true, description: 'Always null: no over-capture.' })
  over_capture_percentage!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  loon_client_key!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  loon_secret_key!: null;
  @ApiProperty({ type: [String], nullable: true, description: 'Always null: the feature does not exist here.' })
  loon_accepted_schemes!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  visa_network_tokens_requestor_id!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  visa_network_tokens_app_id!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  amex_network_tokens_requestor_id!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  amex_network_tokens_app_id!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  mastercard_network_tokens_requestor_id!: null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: the feature does not exist here.' })
  mastercard_network_tokens_app_id!: null;

  @ApiProperty({
    type: [String],
    example: ['https://shop.example.com'],
    description: SECURE_FIELDS_ORIGINS_DESCRIPTION,
  })
  secure_fields_origins!: string[];

  @ApiTimestamp()
  created_at!: string;

  @ApiTimestamp()
  updated_at!: string;

  static from(account: MerchantAccount): MerchantAccountResponse {
    return {
      type: 'merchant-account',
      id: account.id,
      display_name: account.displayName,
      ...FEATURES_OFF,
      secure_fields_origins: [...account.secureFieldsOrigins],
      created_at: account.createdAt.toISOString(),
      updated_at: account.updatedAt.toISOString(),
    };
  }
}
