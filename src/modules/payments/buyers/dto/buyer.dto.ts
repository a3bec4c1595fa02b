import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import { PageQuery } from '../../../../platform/pagination/page-query';
import { Buyer } from '../buyer.entity';

export class CreateBuyerDto {
  @ApiProperty({ example: 'John Doe', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  display_name!: string;

  @ApiPropertyOptional({ type: String, example: 'user-789123', minLength: 1, maxLength: 200, nullable: true })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  external_identifier?: string | null;
}

export class UpdateBuyerDto {
  @ApiPropertyOptional({ example: 'John Doe', minLength: 1, maxLength: 200 })
  // Absent leaves it unchanged; null is refused (a buyer always has a name), unlike external_identifier.
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @Length(1, 200)
  display_name?: string;

  /** `null` clears it; absent leaves it unchanged. */
  @ApiPropertyOptional({
    type: String,
    example: 'user-789123',
    minLength: 1,
    maxLength: 200,
    nullable: true,
    description: 'null clears it.',
  })
  @ValidateIf((_, value) => value !== null && value !== undefined)
  @IsString()
  @Length(1, 200)
  external_identifier?: string | null;
}

export class ListBuyersQuery extends PageQuery {
  @ApiPropertyOptional({
    maxLength: 200,
    description: 'Case-insensitive substring of display_name or external_identifier.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;

  @ApiPropertyOptional({ maxLength: 200, description: 'Exact external_identifier.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  external_identifier?: string;
}

export class BuyerResponse {
  @ApiProperty({ type: String, enum: ['buyer'] })
  type!: 'buyer';
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'default' })
  merchant_account_id!: string;
  @ApiProperty({ example: 'John Doe' })
  display_name!: string;
  @ApiProperty({ type: String, nullable: true, example: 'user-789123' })
  external_identifier!: string | null;
  @ApiTimestamp()
  created_at!: string;
  @ApiTimestamp()
  updated_at!: string;

  static from(buyer: Buyer): BuyerResponse {
    return {
      type: 'buyer',
      id: buyer.id,
      merchant_account_id: buyer.merchantAccountId,
      display_name: buyer.displayName,
      external_identifier: buyer.externalIdentifier,
      created_at: buyer.createdAt.toISOString(),
      updated_at: buyer.updatedAt.toISOString(),
    };
  }
}
