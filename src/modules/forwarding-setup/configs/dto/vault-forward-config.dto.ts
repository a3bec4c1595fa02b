import { applyDecorators } from '@nestjs/common';
import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateIf,
} from 'class-validator';
import { FORWARD_METHODS } from '../../targets/http-methods';
import { AUTHENTICATION_KINDS } from '../../authentication-kinds/kinds';
import { GR4VY_RESPONSE_SCHEMA_NAME, responseSchemaName } from '../../authentication-kinds/schema-names';
import { MAX_EMBEDDED_AUTHENTICATIONS } from '../config-authentications';
import { VaultForwardConfig } from '../vault-forward-config.entity';
import { RECORD_BODIES_DEFAULT_DAYS, RECORD_BODIES_MAX_DAYS } from '../vault-forward-configs.service';
import { RecordBodiesInput, RecordBodiesRetentionInput } from './record-bodies-fields';
import {
  MAX_RESPONSE_RULES,
  ON_EXISTING_ACTIONS,
  OnExistingAction,
  RESPONSE_RULE_ACTIONS,
  ResponseRuleInput,
  UNMATCHED_PAN_ACTIONS,
  UnmatchedPanAction,
} from '../response-rules';

class ResponseRuleDto {
  @ApiProperty({ example: '$.card.number', maxLength: 200, description: 'A JSON path: $, then .name, [n] or [*].' })
  match!: string;
  @ApiProperty({ enum: RESPONSE_RULE_ACTIONS })
  action!: 'tokenize' | 'mask' | 'remove';
  @ApiPropertyOptional({
    example: '$.card.expiry',
    description: 'tokenize: where the expiry is (MM/YY, MM/YYYY or YYYY-MM); [*] take the index of match’s.',
  })
  expiration_date?: string;
  @ApiPropertyOptional({ example: '$.card.name', description: 'tokenize: where the cardholder name is.' })
  cardholder_name?: string;
  @ApiPropertyOptional({
    enum: ON_EXISTING_ACTIONS,
    description:
      'tokenize: a card the merchant holds already is left as it is (`keep`, the default when absent), or its ' +
      'expiry is set to the answer’s (`update_expiry`). Its number and name are never changed.',
  })
  on_existing?: OnExistingAction;
}

const RESPONSE_RULES_DOC =
  'What is done to card data in the downstream’s JSON answers, before they are returned or stored: `tokenize` ' +
  'stores the card as a payment method of the merchant (the same card again gives the same id, left as it is ' +
  'unless `on_existing` says otherwise; its number, expiry and name pass the checks of POST /payment-methods) ' +
  'and puts its id in place, `mask` keeps the BIN and last four, `remove` deletes the member. Each rule is ' +
  'checked here (400 naming `response_rules[i].field`).';
const UNMATCHED_PAN_DOC =
  'A Luhn-valid 13–19 digit number in the answer that no rule covers: sent on (`pass`), masked, or the forward ' +
  'is refused with 502 unmatched-card-number.';

const RECORD_BODIES_DOC =
  'Ours (decision 0138): the records of forwards through this config keep the request as sent (placeholder text ' +
  'where values were filled, secret headers redacted, card numbers masked) and the answer after the response ' +
  'rules, sealed, read through GET /vault-forward/requests/{id}. Off by default: turn it on to debug an ' +
  'integration, then off again. Records made while it is off keep no body; turning it off keeps those recorded ' +
  'until their retention ends.';
const RECORD_BODIES_RETENTION_DOC =
  `Ours: days the records keep those bodies before the purge erases them, 1–${RECORD_BODIES_MAX_DAYS} ` +
  `(${RECORD_BODIES_DEFAULT_DAYS} by default). Fixed for each record when it is made; the operator's ` +
  'FORWARD_RECORD_BODY_RETENTION_DAYS may cap it.';

/**
 * The fields create and update share; the response rules' content is checked by the service (response-rules.ts).
 */
class ResponseFields {
  @RecordBodiesInput(RECORD_BODIES_DOC)
  record_bodies?: boolean;

  @RecordBodiesRetentionInput(RECORD_BODIES_RETENTION_DOC)
  record_bodies_retention_days?: number;

  @ApiPropertyOptional({ type: [ResponseRuleDto], maxItems: MAX_RESPONSE_RULES, description: RESPONSE_RULES_DOC })
  @ValidateIf((_, v) => v !== undefined)
  @IsArray()
  @ArrayMaxSize(MAX_RESPONSE_RULES)
  response_rules?: ResponseRuleInput[];

  @ApiPropertyOptional({ enum: UNMATCHED_PAN_ACTIONS, description: UNMATCHED_PAN_DOC })
  @ValidateIf((_, v) => v !== undefined)
  @IsIn(UNMATCHED_PAN_ACTIONS, { message: `must be one of ${UNMATCHED_PAN_ACTIONS.join(', ')}` })
  unmatched_pan?: UnmatchedPanAction;
}

/** host, host:port, [v6], [v6]:port — exact names, no scheme, path or wildcard. */
const DNS_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_ENTRY = new RegExp(
  `^(?:https?://)?(\\[[0-9A-Fa-f:.]+\\]|${DNS_LABEL}(?:\\.${DNS_LABEL})*)(:[1-9][0-9]{0,4})?$`,
  'i',
);
const HOST_MESSAGE = 'each entry must be a host, host:port or an origin (https://host[:port]), without path';

/** 1–50 host entries, each an exact host or an origin. */
const IsHostList = () =>
  applyDecorators(
    IsArray(),
    ArrayMinSize(1),
    ArrayMaxSize(50),
    IsString({ each: true }),
    Matches(HOST_ENTRY, { each: true, message: HOST_MESSAGE }),
  );
/** A definition's id as Gr4vy spells them: a slug. */
const DEFINITION_ID = /^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$/;

export class CreateVaultForwardConfigDto extends ResponseFields {
  @ApiPropertyOptional({
    example: 'amadeus',
    maxLength: 50,
    description:
      'Gr4vy: the definition to configure; the config takes its hosts, and `display_name` defaults to its name. ' +
      'Without it (ours), `display_name` and `hosts` are required and the config gets its own custom definition.',
  })
  @IsOptional()
  @IsString()
  @Matches(DEFINITION_ID, { message: 'must be the id of a definition (GET /vault-forward/definitions)' })
  definition_id?: string;

  @ApiPropertyOptional({ example: 'Acme PSP', minLength: 1, maxLength: 50 })
  @ValidateIf((o: CreateVaultForwardConfigDto) => o.definition_id === undefined || o.display_name !== undefined)
  @IsString()
  @Length(1, 50)
  display_name?: string;

  @ApiPropertyOptional({
    type: [String],
    minItems: 1,
    maxItems: 50,
    example: ['api.acme-psp.example', 'api.acme-psp.example:8443', 'https://api2.acme-psp.example'],
    description:
      'Ours, without `definition_id`: exact host names (add :port when it is not 443; any scheme the transport ' +
      'rules allow), or origins (`https://host[:port]`: that scheme and port only).',
  })
  @ValidateIf((o: CreateVaultForwardConfigDto) => o.definition_id === undefined || o.hosts !== undefined)
  @IsHostList()
  hosts?: string[];

  @ApiPropertyOptional({
    example: ['POST', 'PUT', 'PATCH'],
    enum: FORWARD_METHODS,
    isArray: true,
    default: ['POST', 'PUT', 'PATCH'],
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(FORWARD_METHODS, { each: true, message: `each entry must be one of ${FORWARD_METHODS.join(', ')}` })
  methods?: string[];

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class UpdateVaultForwardConfigDto extends ResponseFields {
  @ApiPropertyOptional({ minLength: 1, maxLength: 50 })
  @ValidateIf((_, v) => v !== undefined)
  @IsString()
  @Length(1, 50)
  display_name?: string;

  @ApiPropertyOptional({ type: [String], minItems: 1, maxItems: 50, example: ['api.acme-psp.example'] })
  @ValidateIf((_, v) => v !== undefined)
  @IsHostList()
  hosts?: string[];

  @ApiPropertyOptional({ enum: FORWARD_METHODS, isArray: true })
  @ValidateIf((_, v) => v !== undefined)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(FORWARD_METHODS, { each: true, message: `each entry must be one of ${FORWARD_METHODS.join(', ')}` })
  methods?: string[];

  @ApiPropertyOptional()
  @ValidateIf((_, v) => v !== undefined)
  @IsBoolean()
  enabled?: boolean;
}

/** A config with its methods, as the routes answer them (rendered by the authentication methods' own routes). */
export interface Embedded {
  authentications: object[];
}

/** Every kind's answer, in our shape, and Gr4vy's. */
const AUTHENTICATION_RESPONSES = [...AUTHENTICATION_KINDS.map(responseSchemaName), GR4VY_RESPONSE_SCHEMA_NAME];

export class VaultForwardConfigResponse {
  @ApiProperty({ type: String, enum: ['vault-forward-config'] })
  type!: 'vault-forward-config';
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty()
  merchant_account_id!: string;
  @ApiProperty({ description: 'A definition’s id, or `custom-<id>` for a config made with its own hosts.' })
  definition_id!: string;
  @ApiProperty()
  display_name!: string;
  @ApiProperty({ type: [String] })
  hosts!: string[];
  @ApiProperty({ type: String, enum: FORWARD_METHODS, isArray: true })
  methods!: string[];
  @ApiProperty()
  enabled!: boolean;
  @ApiProperty({ type: [ResponseRuleDto], description: RESPONSE_RULES_DOC })
  response_rules!: ResponseRuleInput[];
  @ApiProperty({ enum: UNMATCHED_PAN_ACTIONS, description: UNMATCHED_PAN_DOC })
  unmatched_pan!: UnmatchedPanAction;
  @ApiProperty({ type: Boolean, description: RECORD_BODIES_DOC })
  record_bodies!: boolean;
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: RECORD_BODIES_MAX_DAYS,
    description: RECORD_BODIES_RETENTION_DOC,
  })
  record_bodies_retention_days!: number;
  @ApiTimestamp()
  created_at!: string;
  @ApiTimestamp()
  updated_at!: string;
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { id: { type: 'string' }, name: { type: 'string' }, email_address: { type: 'string' } },
    description: 'Gr4vy: the user who created it. Always null: this service has API keys, no users.',
  })
  creator!: null;
  @ApiProperty({
    type: 'array',
    items: { oneOf: AUTHENTICATION_RESPONSES.map((name) => ({ $ref: `#/components/schemas/${name}` })) },
    maxItems: MAX_EMBEDDED_AUTHENTICATIONS,
    description:
      `Gr4vy: the config’s authentication methods, newest first, each in the shape it was created in (at most ` +
      `${MAX_EMBEDDED_AUTHENTICATIONS}; GET /vault-forward/configs/{id}/authentications lists every one).`,
  })
  authentications!: object[];

  static from(config: VaultForwardConfig & Embedded): VaultForwardConfigResponse {
    return {
      type: 'vault-forward-config',
      id: config.id,
      merchant_account_id: config.merchantAccountId,
      definition_id: config.definitionId,
      display_name: config.displayName,
      hosts: config.hosts,
      methods: config.methods,
      enabled: config.enabled,
      response_rules: config.responseRules,
      unmatched_pan: config.unmatchedPan,
      record_bodies: config.recordBodies,
      record_bodies_retention_days: config.recordBodiesRetentionDays,
      created_at: config.createdAt.toISOString(),
      updated_at: config.updatedAt.toISOString(),
      creator: null,
      authentications: config.authentications,
    };
  }
}
