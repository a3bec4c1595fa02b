import { ApiTimestamp } from '../../common/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsString, Length, ValidateIf } from 'class-validator';
import { ForwardAuthentication } from '../forward-authentication.entity';
import { AUTHENTICATION_KINDS, AuthenticationKind } from '../kinds';
import { describePublicFields, MethodDetails, MethodWarning } from '../method-fields';

// The request and response bodies are documented per kind by openapi.ts (oneOf, discriminated by
// `kind`); these classes carry the validation of the envelope, and fields.* is checked against the
// kind's description by the service.

export class CreateForwardAuthenticationDto {
  @IsIn(AUTHENTICATION_KINDS, { message: `must be one of ${AUTHENTICATION_KINDS.join(', ')}` })
  kind!: AuthenticationKind;

  @IsString()
  @Length(1, 100)
  label!: string;

  @IsObject()
  fields!: Record<string, unknown>;
}

export class UpdateForwardAuthenticationDto {
  @ValidateIf((_, v) => v !== undefined)
  @IsString()
  @Length(1, 100)
  label?: string;

  /** A whole new set: secrets are never merged with the stored ones. */
  @ValidateIf((_, v) => v !== undefined)
  @IsObject()
  fields?: Record<string, unknown>;
}

export class ForwardAuthenticationResponse {
  @ApiProperty({ type: String, enum: ['vault-forward-authentication'] })
  type!: 'vault-forward-authentication';
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ format: 'uuid' })
  config_id!: string;
  @ApiProperty()
  merchant_account_id!: string;
  @ApiProperty({ type: String, enum: AUTHENTICATION_KINDS })
  kind!: AuthenticationKind;
  @ApiProperty()
  label!: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'The non-secret fields, as entered. Secret fields are never returned.',
  })
  fields!: Record<string, string>;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Facts derived from the non-secret fields (certificate subject, issuer, expiry, fingerprint; public key type).',
  })
  details!: MethodDetails;
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: { type: 'string' } },
    description: 'What looks wrong but was stored as entered: {code, field, message}.',
  })
  warnings!: MethodWarning[];
  @ApiTimestamp()
  created_at!: string;
  @ApiTimestamp()
  updated_at!: string;

  static from(this: void, method: ForwardAuthentication): ForwardAuthenticationResponse {
    const described = describePublicFields(method.kind, method.fields);
    return {
      type: 'vault-forward-authentication',
      id: method.id,
      config_id: method.configId,
      merchant_account_id: method.merchantAccountId,
      kind: method.kind,
      label: method.label,
      fields: method.fields,
      details: described.details,
      warnings: [...method.warnings, ...described.warnings],
      created_at: method.createdAt.toISOString(),
      updated_at: method.updatedAt.toISOString(),
    };
  }
}

export class AuthenticationKindFieldResponse {
  @ApiProperty() name!: string;
  @ApiProperty() secret!: boolean;
  @ApiProperty() required!: boolean;
  @ApiProperty() format!: string;
  @ApiPropertyOptional({ type: [String] }) enum?: string[];
  @ApiPropertyOptional() default?: string;
  @ApiProperty() max_length!: number;
  @ApiProperty() description!: string;
}

export class AuthenticationKindResponse {
  @ApiProperty({ enum: AUTHENTICATION_KINDS }) kind!: AuthenticationKind;
  @ApiProperty() title!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: [AuthenticationKindFieldResponse] }) fields!: AuthenticationKindFieldResponse[];
}

export class AuthenticationKindsResponse {
  @ApiProperty({ type: [AuthenticationKindResponse] }) items!: AuthenticationKindResponse[];
}
