import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateNested,
} from 'class-validator';
import {
  AuthenticationDefinition,
  Definition,
  DEFINITION_ID,
  DEFINITION_KINDS,
  SIGNATURE_KINDS,
  DefinitionFieldFormat,
  DefinitionKind,
  FIELD_FORMATS,
  FIELD_KEY,
} from '../definition';
import type { AuthenticationKind } from '../../authentication-kinds/kinds';

class DefinitionFieldDto {
  @ApiProperty({ example: 'private_key', maxLength: 50, pattern: FIELD_KEY.source })
  @IsString()
  @Matches(FIELD_KEY, { message: 'must be lower-case letters, digits and _ (at most 50), starting with a letter' })
  key!: string;

  @ApiProperty({ example: 'Private key', minLength: 1, maxLength: 100 })
  @IsString()
  @Length(1, 100)
  display_name!: string;

  @ApiProperty()
  @IsBoolean()
  required!: boolean;

  @ApiProperty({ enum: FIELD_FORMATS })
  @IsIn(FIELD_FORMATS, { message: `must be one of ${FIELD_FORMATS.join(', ')}` })
  format!: DefinitionFieldFormat;

  @ApiProperty({ description: 'Never returned when true. Must be true when the field it maps to is secret.' })
  @IsBoolean()
  secret!: boolean;

  @ApiProperty({ example: 'private_key', description: 'Ours: the field of our kind that takes the value.' })
  @IsString()
  @Length(1, 64)
  maps_to!: string;
}

class AuthenticationDefinitionDto {
  @ApiProperty({ enum: DEFINITION_KINDS })
  @IsIn(DEFINITION_KINDS, { message: `must be one of ${DEFINITION_KINDS.join(', ')}` })
  kind!: DefinitionKind;

  @ApiProperty({ example: 'Mutual TLS', minLength: 1, maxLength: 100 })
  @IsString()
  @Length(1, 100)
  title!: string;

  @ApiProperty({ example: 'The client certificate the third party issued.', maxLength: 1000 })
  @IsString()
  @Length(0, 1000)
  description!: string;

  @ApiProperty({ type: [DefinitionFieldDto], minItems: 1, maxItems: 20 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => DefinitionFieldDto)
  fields!: DefinitionFieldDto[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Ours: non-secret fields of our kind that the definition fixes (e.g. a signature’s template).',
  })
  @IsOptional()
  @IsObject()
  settings?: Record<string, string>;

  @ApiPropertyOptional({
    enum: SIGNATURE_KINDS,
    description: 'Ours, for a `signature` only: which of our signing kinds it is; `hmac-signature` when absent.',
  })
  @IsOptional()
  @IsIn(SIGNATURE_KINDS, { message: `must be one of ${SIGNATURE_KINDS.join(', ')}` })
  maps_to_kind?: AuthenticationKind;
}

export class UpdateVaultForwardDefinitionDto {
  @ApiProperty({ example: 'Example PSP', minLength: 1, maxLength: 50 })
  @IsString()
  @Length(1, 50)
  display_name!: string;

  @ApiProperty({ type: [String], minItems: 1, maxItems: 50, example: ['https://api.example-psp.com'] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @Length(1, 300, { each: true })
  hosts!: string[];

  @ApiProperty({
    type: [AuthenticationDefinitionDto],
    minItems: 0,
    maxItems: 3,
    description:
      'The authentication methods its configs may hold. Ours: may be empty, for a third party that takes the ' +
      'caller’s own credentials passed through (`x-vault-forward-header-authorization`); Gr4vy’s catalog has one ' +
      'at least (decision 0132).',
  })
  @IsArray()
  @ArrayMaxSize(3)
  @ValidateNested({ each: true })
  @Type(() => AuthenticationDefinitionDto)
  authentications!: AuthenticationDefinitionDto[];
}

export class CreateVaultForwardDefinitionDto extends UpdateVaultForwardDefinitionDto {
  @ApiProperty({ example: 'example-psp', pattern: DEFINITION_ID.source, maxLength: 50 })
  @IsString()
  @Matches(DEFINITION_ID, { message: 'must be a slug: lower-case letters, digits and -, at most 50' })
  @Matches(/^(?!custom-)/, { message: 'must not start with custom- (kept for configs’ own definitions)' })
  id!: string;
}

export function authenticationsOf(dtos: AuthenticationDefinitionDto[]): AuthenticationDefinition[] {
  return dtos.map((a) => ({
    kind: a.kind,
    title: a.title,
    description: a.description,
    fields: a.fields.map((f) => ({ ...f })),
    settings: { ...(a.settings ?? {}) },
    ...(a.maps_to_kind !== undefined ? { maps_to_kind: a.maps_to_kind } : {}),
  }));
}

class DefinitionFieldResponse {
  @ApiProperty() key!: string;
  @ApiProperty() display_name!: string;
  @ApiProperty() required!: boolean;
  @ApiProperty({ enum: FIELD_FORMATS }) format!: DefinitionFieldFormat;
  @ApiProperty() secret!: boolean;
}

class AuthenticationDefinitionResponse {
  @ApiProperty({ type: String, enum: ['vault-forward-authentication-definition'] })
  type!: 'vault-forward-authentication-definition';
  @ApiProperty({ enum: DEFINITION_KINDS }) kind!: DefinitionKind;
  @ApiProperty() title!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: [DefinitionFieldResponse] }) fields!: DefinitionFieldResponse[];
}

export class VaultForwardDefinitionResponse {
  @ApiProperty({ example: 'amadeus' }) id!: string;
  @ApiProperty({ type: String, enum: ['vault-forward-definition'] }) type!: 'vault-forward-definition';
  @ApiProperty() display_name!: string;
  @ApiProperty({ type: [String], example: ['https://api.amadeus.com'] }) hosts!: string[];
  @ApiProperty({ type: [AuthenticationDefinitionResponse] }) authentications!: AuthenticationDefinitionResponse[];
  @ApiProperty({
    enum: ['catalog', 'instance', 'custom'],
    description: 'Ours: the shipped catalog, an instance administrator’s, or a config’s own (custom).',
  })
  source!: Definition['source'];

  /** Gr4vy's shape, plus `source`. How fields map onto our mechanisms stays inside. */
  static from(this: void, d: Definition): VaultForwardDefinitionResponse {
    return {
      id: d.id,
      type: 'vault-forward-definition',
      display_name: d.display_name,
      hosts: d.hosts,
      authentications: d.authentications.map((a) => ({
        type: 'vault-forward-authentication-definition',
        kind: a.kind,
        title: a.title,
        description: a.description,
        fields: a.fields.map((f) => ({
          key: f.key,
          display_name: f.display_name,
          required: f.required,
          format: f.format,
          secret: f.secret,
        })),
      })),
      source: d.source,
    };
  }
}

export class VaultForwardDefinitionsResponse {
  @ApiProperty({ type: [VaultForwardDefinitionResponse] }) items!: VaultForwardDefinitionResponse[];
}
