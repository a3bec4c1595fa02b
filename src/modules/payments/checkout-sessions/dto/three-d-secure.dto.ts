import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';

/**
 * The outcome of a 3-D Secure authentication of the session's card, in Gr4vy's `ThreeDSecureDataV2`
 * shape (what its transactions take as `three_d_secure_data`) plus `server_transaction_id` (the 3DS
 * Server's transaction id, `threeDSServerTransID`). Sealed; never answered (decision 0101). Each value is
 * short and of a fixed alphabet, so none can break a body or a header it is filled into.
 */
export class CheckoutSessionThreeDSecureDto {
  @ApiProperty({ description: 'The cardholder authentication value (CAVV/AAV), base64 or hex.', maxLength: 64 })
  @IsString()
  @Matches(/^[A-Za-z0-9+/=_-]{1,64}$/, { message: 'must be 1 to 64 base64 or hex characters' })
  cavv!: string;

  @ApiProperty({ description: 'The electronic commerce indicator, two digits.', example: '05' })
  @IsString()
  @Matches(/^[0-9]{2}$/, { message: 'must be two digits' })
  eci!: string;

  @ApiProperty({ description: 'The 3-D Secure version used.', example: '2.2.0' })
  @IsString()
  @Matches(/^[0-9]{1,2}(\.[0-9]{1,2}){1,2}$/, { message: 'must be a version such as 2.2.0' })
  version!: string;

  @ApiProperty({ description: 'The transaction status of the ARes (version 1: the enrolment response).', example: 'Y' })
  @IsString()
  @Matches(/^[A-Z]$/, { message: 'must be one upper-case letter' })
  directory_response!: string;

  @ApiPropertyOptional({ description: 'The transaction status of the RReq, after a challenge.', example: 'Y' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Z]$/, { message: 'must be one upper-case letter' })
  authentication_response?: string;

  @ApiProperty({ description: 'The directory server transaction id (dsTransID).', maxLength: 64 })
  @IsString()
  @Matches(/^[A-Za-z0-9-]{1,64}$/, { message: 'must be 1 to 64 letters, digits or dashes' })
  directory_transaction_id!: string;

  @ApiPropertyOptional({ description: 'The 3DS Server transaction id (threeDSServerTransID).', maxLength: 64 })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9-]{1,64}$/, { message: 'must be 1 to 64 letters, digits or dashes' })
  server_transaction_id?: string;

  @ApiPropertyOptional({ description: 'The card scheme 3-D Secure ran for.', example: 'visa' })
  @IsOptional()
  @IsString()
  @Matches(/^[a-z][a-z-]{0,31}$/, { message: 'must be a scheme such as visa' })
  scheme?: string;
}

/** The placeholder name (after CARD_3DS_) → the field of the sealed JSON that fills it. */
export const THREE_D_SECURE_FIELDS = {
  CAVV: 'cavv',
  ECI: 'eci',
  VERSION: 'version',
  DIRECTORY_RESPONSE: 'directory_response',
  AUTHENTICATION_RESPONSE: 'authentication_response',
  SERVER_TRANSACTION_ID: 'server_transaction_id',
  DS_TRANSACTION_ID: 'directory_transaction_id',
  SCHEME: 'scheme',
} as const satisfies Record<string, keyof CheckoutSessionThreeDSecureDto>;

export type ThreeDSecureValues = Partial<Record<keyof CheckoutSessionThreeDSecureDto, string>>;
