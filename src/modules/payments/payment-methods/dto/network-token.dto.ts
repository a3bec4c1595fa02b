import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { isCardNumberLength } from '../../../../platform/card-data/card-numbers';
import { ApiTimestamp } from '../../../../platform/openapi/properties';
import type { Timestamp } from '../../../../platform/database/timestamp';
import { Passes } from '../../../../platform/http/passes';
import { EXPIRATION_DATE_PATTERN, expirationDateProblem } from '../../../vault/card';

export const NETWORK_TOKEN_STATUSES = ['active', 'suspended'] as const;
export type NetworkTokenStatus = (typeof NETWORK_TOKEN_STATUSES)[number];

/**
 * The caller stores a token its token requestor already provisioned (docs/decisions/0085): we are a
 * vault, not a token requestor, so Gr4vy's provisioning inputs (merchant_initiated, …) have no use here.
 */
export class CreateNetworkTokenDto {
  @ApiProperty({ example: '4111123456789012', description: '12–19 digits. Stored encrypted; never returned.' })
  @IsString()
  // A PAN-shaped number (a DPAN), as the networks issue them.
  @Passes('isNetworkToken', (value) => (isCardNumberLength(value) ? null : 'must be 12 to 19 digits'))
  token!: string;

  @ApiProperty({ example: '12/30', pattern: EXPIRATION_DATE_PATTERN.source })
  @Passes('isExpirationDate', expirationDateProblem)
  expiration_date!: string;

  @ApiPropertyOptional({ enum: NETWORK_TOKEN_STATUSES, default: 'active' })
  @IsOptional()
  @IsIn(NETWORK_TOKEN_STATUSES)
  status?: NetworkTokenStatus;
}

export interface NetworkTokenRow {
  id: string;
  payment_method_id: string;
  status: NetworkTokenStatus;
  expiration_date: string;
  label: string;
  scheme: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Gr4vy's NetworkToken, except `token`: only its last four digits leave the vault (`label`). */
export class NetworkTokenResponse {
  @ApiProperty({ enum: ['network-token'] })
  type!: 'network-token';

  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  payment_method_id!: string;

  @ApiProperty({ enum: NETWORK_TOKEN_STATUSES })
  status!: NetworkTokenStatus;

  @ApiProperty({ example: '12/30' })
  expiration_date!: string;

  @ApiProperty({ example: '9012', description: 'The last four digits of the token; the token is never returned.' })
  label!: string;

  @ApiProperty({ example: 'visa', description: 'The scheme of the card the token stands for.' })
  scheme!: string;

  @ApiTimestamp()
  created_at!: string;

  @ApiTimestamp()
  updated_at!: string;

  static from(row: NetworkTokenRow): NetworkTokenResponse {
    return {
      type: 'network-token',
      id: row.id,
      payment_method_id: row.payment_method_id,
      status: row.status,
      expiration_date: row.expiration_date,
      label: row.label,
      scheme: row.scheme,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }
}

export class NetworkTokensResponse {
  @ApiProperty({ type: [NetworkTokenResponse] })
  items!: NetworkTokenResponse[];
}
