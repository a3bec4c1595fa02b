import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { PageQuery } from '../../../../platform/pagination/page-query';
import { MERCHANT_ACCOUNT_ID_PATTERN } from '../../accounts/merchant-account-id';
import { ApiKey, ApiKeyAlgorithm } from '../api-key.entity';

export class ListApiKeysQuery extends PageQuery {
  @ApiPropertyOptional({
    example: 'default',
    description:
      "Only this merchant account's keys. A merchant key sees its own merchant account's keys whatever this says.",
  })
  @IsOptional()
  @Matches(MERCHANT_ACCOUNT_ID_PATTERN, { message: `must match ${MERCHANT_ACCOUNT_ID_PATTERN.source}` })
  merchant_account_id?: string;
}

/** What is known about a key: never key material (the private key was never stored). */
export class ApiKeyResponse {
  @ApiProperty({ type: String, enum: ['api-key'] })
  type!: 'api-key';
  @ApiProperty({
    description: 'RFC 7638 thumbprint of the public key: the `kid` of its tokens.',
    example: 'mJ0k8pQZ3x…',
  })
  id!: string;
  @ApiProperty({ type: String, nullable: true, example: 'default', description: 'null for an instance key.' })
  merchant_account_id!: string | null;
  @ApiProperty({ type: String, enum: ['ES512', 'ES256'] })
  algorithm!: ApiKeyAlgorithm;
  @ApiTimestamp()
  created_at!: string;
  @ApiTimestamp({ nullable: true, description: 'null while the key is active.' })
  revoked_at!: string | null;

  static from(key: ApiKey): ApiKeyResponse {
    return {
      type: 'api-key',
      id: key.id,
      merchant_account_id: key.merchantAccountId,
      algorithm: key.algorithm,
      created_at: key.createdAt.toISOString(),
      revoked_at: key.revokedAt ? key.revokedAt.toISOString() : null,
    };
  }
}
