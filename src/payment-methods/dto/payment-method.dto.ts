import { ApiTimestamp } from '../../common/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Length, Matches, ValidateBy } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query';
import { cardNumberProblem, CardScheme, EXPIRATION_DATE_PATTERN } from '../../vault/card';
import { PaymentMethod } from '../payment-method.entity';

/** Validates a card number; the message says what is wrong and never repeats the number. */
function IsCardNumber(): PropertyDecorator {
  return ValidateBy({
    name: 'isCardNumber',
    validator: {
      validate: (value: unknown) => cardNumberProblem(value) === null,
      defaultMessage: (args) => cardNumberProblem(args?.value) ?? 'is invalid',
    },
  });
}

export class CreatePaymentMethodDto {
  @ApiProperty({ type: String, enum: ['card'] })
  @IsIn(['card'])
  method!: 'card';

  @ApiProperty({ example: '4111 1111 1111 1111', description: '12–19 digits (spaces and dashes ignored), Luhn-valid. Never returned.' })
  @IsCardNumber()
  number!: string;

  @ApiProperty({ example: '12/30', pattern: EXPIRATION_DATE_PATTERN.source })
  @IsString()
  @Matches(EXPIRATION_DATE_PATTERN, { message: 'must be MM/YY with a month from 01 to 12' })
  expiration_date!: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'A buyer of the same merchant account.' })
  @IsOptional()
  @IsUUID('all')
  buyer_id?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  external_identifier?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'Stored encrypted; fills {{ CARDHOLDER_NAME_X }}. Never returned.' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  // It may be placed into forwarded header values: no line breaks or other control characters, C1
  // (U+0080–U+009F) included, which no header or JSON consumer expects in a name.
  @Matches(/^[^\u0000-\u001f\u007f-\u009f]*$/, { message: 'must not contain control characters' })
  cardholder_name?: string;
}

export class ListPaymentMethodsQuery extends PageQueryDto({ default: 20, max: 100 }) {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only the payment methods of this buyer.' })
  @IsOptional()
  @IsUUID('all')
  buyer_id?: string;
}

export class PaymentMethodResponse {
  @ApiProperty({ type: String, enum: ['payment-method'] })
  type!: 'payment-method';
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'default' })
  merchant_account_id!: string;
  @ApiProperty({ type: String, enum: ['card'] })
  method!: 'card';
  @ApiProperty({ type: String, enum: ['visa', 'mastercard', 'amex', 'discover', 'jcb', 'diners', 'unionpay', 'maestro', 'unknown'] })
  scheme!: CardScheme;
  @ApiProperty({ example: '1111', description: 'Last four digits.' })
  label!: string;
  @ApiProperty({ example: '12/30' })
  expiration_date!: string;
  @ApiProperty({ description: 'Keyed HMAC of the number: equal for the same card within a merchant account, not reversible.' })
  fingerprint!: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  buyer_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  external_identifier!: string | null;
  @ApiTimestamp()
  created_at!: string;
  @ApiTimestamp()
  updated_at!: string;

  static from(pm: PaymentMethod): PaymentMethodResponse {
    return {
      type: 'payment-method',
      id: pm.id,
      merchant_account_id: pm.merchantAccountId,
      method: pm.method,
      scheme: pm.scheme,
      label: pm.label,
      expiration_date: pm.expirationDate,
      fingerprint: pm.fingerprint,
      buyer_id: pm.buyerId,
      external_identifier: pm.externalIdentifier,
      created_at: pm.createdAt.toISOString(),
      updated_at: pm.updatedAt.toISOString(),
    };
  }
}
