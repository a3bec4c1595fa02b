import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsIn, IsObject, IsString, Length, ValidateIf } from 'class-validator';
import {
  AuthenticationDefinition,
  DEFINITION_KIND_OF,
  DEFINITION_KINDS,
  DefinitionKind,
} from '../../definitions/definition';
import { gr4vyFields, keyFor } from '../../definitions/definition-fields';
import { ForwardAuthentication } from '../forward-authentication.entity';
import { AUTHENTICATION_KINDS, AuthenticationKind } from '../../authentication-kinds/kinds';
import { describePublicFields, MethodDetails, MethodWarning } from '../../authentication-kinds/method-fields';

const ALL_KINDS = [...AUTHENTICATION_KINDS, ...DEFINITION_KINDS];

export function isDefinitionKind(kind: unknown): kind is DefinitionKind {
  return (DEFINITION_KINDS as readonly unknown[]).includes(kind);
}

// The request and response bodies are documented per kind by openapi.ts (oneOf, discriminated by
// `kind`); these classes carry the validation of the envelope, and fields.* is checked against the
// kind's description by the service.

/**
 * Either shape: ours (`kind` hmac-signature|mutual-tls|jwe-payload, `label`, `fields: {…}`) or Gr4vy's
 * (`kind` mle|mtls|signature, `display_name`, `fields: [{key, value}]`, read by the service against
 * the config's definition).
 */
export class CreateForwardAuthenticationDto {
  @IsIn(ALL_KINDS, { message: `must be one of ${ALL_KINDS.join(', ')}` })
  kind!: AuthenticationKind | DefinitionKind;

  @ValidateIf((o: CreateForwardAuthenticationDto) => !isDefinitionKind(o.kind) || o.label !== undefined)
  @IsString()
  @Length(1, 100)
  label?: string;

  @ValidateIf((o: CreateForwardAuthenticationDto) => isDefinitionKind(o.kind) || o.display_name !== undefined)
  @IsString()
  @Length(1, 50)
  display_name?: string;

  @ValidateIf((o: CreateForwardAuthenticationDto) => !isDefinitionKind(o.kind))
  @IsObject()
  fields!: Record<string, unknown> | unknown[];
}

export class UpdateForwardAuthenticationDto {
  @ValidateIf((_, v) => v !== undefined)
  @IsString()
  @Length(1, 100)
  label?: string;

  /** Gr4vy's. */
  @ValidateIf((_, v) => v !== undefined)
  @IsString()
  @Length(1, 50)
  display_name?: string;

  /** Ours: a whole new set (secrets are never merged with the stored ones). Gr4vy's: `[{key, value}]`, merged. */
  @Allow()
  fields?: Record<string, unknown> | unknown[];
}

/** A method as a response is made from it: when it was read, and its definition for Gr4vy's shape. */
export type RenderedMethod = ForwardAuthentication & { readAtMs: number; definition?: AuthenticationDefinition };

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
      'Facts derived from the non-secret fields (certificate subject, issuer, expiry, fingerprint; public key type), ' +
      'and of a response key only its type, size and public key thumbprint (`response_private_key`).',
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

  /**
   * In the shape the method was created in; Gr4vy's needs the definition's authentication of its kind.
   * `readAtMs` (the Clock's epochMs when it was read) dates the certificate expiry warnings.
   */
  static from(this: void, method: RenderedMethod): ForwardAuthenticationResponse | Gr4vyForwardAuthenticationResponse {
    return method.shape === 'gr4vy' ? gr4vyView(method, method.definition) : ourView(method);
  }
}

export interface Gr4vyForwardAuthenticationResponse {
  type: 'vault-forward-config-authentication';
  id: string;
  config_id: string;
  merchant_account_id: string;
  kind: DefinitionKind;
  label: string;
  display_name: string;
  fields: Array<{ key: string; value: string }>;
  details: MethodDetails;
  warnings: MethodWarning[];
  created_at: string;
  updated_at: string;
  creator: null;
}

function gr4vyView(
  method: RenderedMethod,
  definition: AuthenticationDefinition | undefined,
): Gr4vyForwardAuthenticationResponse {
  const described = describePublicFields(method.kind, method.fields, method.readAtMs);
  return {
    type: 'vault-forward-config-authentication',
    id: method.id,
    config_id: method.configId,
    merchant_account_id: method.merchantAccountId,
    // Only methods made from a definition are shown in Gr4vy's shape, and each has a Gr4vy kind.
    kind: DEFINITION_KIND_OF[method.kind]!,
    label: method.label,
    display_name: method.label,
    fields: gr4vyFields(definition, method.fields),
    details: { ...described.details, ...method.secretDetails },
    warnings: [...method.warnings, ...described.warnings].map((w) => ({ ...w, field: keyFor(definition, w.field) })),
    created_at: method.createdAt.toISOString(),
    updated_at: method.updatedAt.toISOString(),
    creator: null,
  };
}

function ourView(method: RenderedMethod): ForwardAuthenticationResponse {
  const described = describePublicFields(method.kind, method.fields, method.readAtMs);
  return {
    type: 'vault-forward-authentication',
    id: method.id,
    config_id: method.configId,
    merchant_account_id: method.merchantAccountId,
    kind: method.kind,
    label: method.label,
    fields: method.fields,
    details: { ...described.details, ...method.secretDetails },
    warnings: [...method.warnings, ...described.warnings],
    created_at: method.createdAt.toISOString(),
    updated_at: method.updatedAt.toISOString(),
  };
}

class AuthenticationKindFieldResponse {
  @ApiProperty() name!: string;
  @ApiProperty() secret!: boolean;
  @ApiProperty() required!: boolean;
  @ApiProperty() format!: string;
  @ApiPropertyOptional({ type: [String] }) enum?: string[];
  @ApiPropertyOptional() default?: string;
  @ApiProperty() max_length!: number;
  @ApiProperty() description!: string;
}

class AuthenticationKindResponse {
  @ApiProperty({ enum: AUTHENTICATION_KINDS }) kind!: AuthenticationKind;
  @ApiProperty() title!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: [AuthenticationKindFieldResponse] }) fields!: AuthenticationKindFieldResponse[];
}

export class AuthenticationKindsResponse {
  @ApiProperty({ type: [AuthenticationKindResponse] }) items!: AuthenticationKindResponse[];
}
