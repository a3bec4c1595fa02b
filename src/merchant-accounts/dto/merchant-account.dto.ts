import { ApiTimestamp } from '../../common/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Length, Matches, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query';
import { MerchantAccount } from '../merchant-account.entity';
import { MERCHANT_ACCOUNT_ID_PATTERN } from '../merchant-account-id';

export class CreateMerchantAccountDto {
  @ApiProperty({ example: 'acme-eu', pattern: MERCHANT_ACCOUNT_ID_PATTERN.source })
  @IsString()
  @Matches(MERCHANT_ACCOUNT_ID_PATTERN, { message: 'must be a slug: lowercase letters, digits and dashes, 1–64 characters' })
  id!: string;

  @ApiProperty({ example: 'ACME Europe', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  display_name!: string;
}

export class UpdateMerchantAccountDto {
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

  @ApiTimestamp()
  created_at!: string;

  @ApiTimestamp()
  updated_at!: string;

  static from(account: MerchantAccount): MerchantAccountResponse {
    return {
      type: 'merchant-account',
      id: account.id,
      display_name: account.displayName,
      created_at: account.createdAt.toISOString(),
      updated_at: account.updatedAt.toISOString(),
    };
  }
}

export class ListMerchantAccountsQuery extends PageQueryDto({ default: 20, max: 100 }) {}
