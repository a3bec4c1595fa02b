import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import { ApiTimestamp } from '../../../../platform/openapi/properties';
import { Passes } from '../../../../platform/http/passes';
import {
  RECORD_BODIES_DEFAULT_DAYS,
  RECORD_BODIES_MAX_DAYS,
} from '../../../forwarding-setup/configs/vault-forward-configs.service';
import {
  RecordBodiesInput,
  RecordBodiesRetentionInput,
} from '../../../forwarding-setup/configs/dto/record-bodies-fields';
import { FORWARD_METHODS } from '../../../forwarding-setup/targets/http-methods';
import { BODY_FORMATS, MAPPED_FIELDS } from '../../bodies/body-paths';
import { CallerAuthenticationInput, callerAuthenticationProblem, CallerSettings } from '../caller-authentication';
import { FieldMappings, fieldMappingsProblem } from '../field-mappings';
import { InboundRoute } from '../inbound-route.entity';
import { UpstreamHeader, upstreamHeadersProblem } from '../upstream-headers';

const MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_BODY_BYTES = 64 * 1024;
const MAX_TIMEOUT_SECONDS = 120;
export const DEFAULT_TIMEOUT_SECONDS = 30;

const header = { type: 'string', description: 'An HTTP header name (not one the message or a proxy sets).' };
const secret = {
  type: 'string',
  writeOnly: true,
  minLength: 16,
  maxLength: 512,
  description: 'Write-only: sealed at rest, never answered. At least 16 bytes (a `whsec_` secret: its decoded key).',
};

/** One schema per kind, as `oneOf` (the DTO's check is callerAuthenticationProblem). */
const CALLER_AUTHENTICATION_SCHEMA: ApiPropertyOptions = {
  description:
    'How callers prove themselves (decision 0154). Secrets are write-only: answers leave them out. ' +
    '`mutual-tls` needs the operator’s TLS terminator to pass on client certificates (INBOUND_CLIENT_CERT_HEADER).',
  oneOf: [
    {
      type: 'object',
      title: 'shared-secret',
      required: ['kind', 'header'],
      properties: { kind: { type: 'string', enum: ['shared-secret'] }, header, secret },
    },
    {
      type: 'object',
      title: 'hmac standard-webhooks',
      required: ['kind', 'scheme'],
      properties: {
        kind: { type: 'string', enum: ['hmac'] },
        scheme: { type: 'string', enum: ['standard-webhooks'] },
        secret,
        tolerance_seconds: { type: 'integer', minimum: 1, maximum: 3600, default: 300 },
      },
    },
    {
      type: 'object',
      title: 'hmac hmac-sha256',
      required: ['kind', 'scheme', 'header'],
      properties: {
        kind: { type: 'string', enum: ['hmac'] },
        scheme: { type: 'string', enum: ['hmac-sha256'] },
        header,
        secret,
        encoding: { type: 'string', enum: ['hex', 'base64'], default: 'hex' },
      },
    },
    {
      type: 'object',
      title: 'mutual-tls',
      required: ['kind', 'ca_certificates'],
      properties: {
        kind: { type: 'string', enum: ['mutual-tls'] },
        ca_certificates: {
          type: 'string',
          description: 'PEM: the certificate authorities that issue callers’ certificates.',
        },
      },
    },
    {
      type: 'object',
      title: 'none',
      required: ['kind', 'rate_limit'],
      properties: {
        kind: { type: 'string', enum: ['none'] },
        rate_limit: {
          type: 'object',
          required: ['requests', 'per_seconds'],
          properties: {
            requests: { type: 'integer', minimum: 1, maximum: 100000 },
            per_seconds: { type: 'integer', minimum: 1, maximum: 86400 },
          },
        },
      },
    },
  ],
};

const mappingOfFormat = {
  type: 'object' as const,
  additionalProperties: false,
  properties: Object.fromEntries(MAPPED_FIELDS.map((field) => [field, { type: 'string' as const, maxLength: 200 }])),
};
const FIELD_MAPPINGS_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(BODY_FORMATS.map((format) => [format, mappingOfFormat])),
  description:
    'Where card data sits in the bodies the route takes (decision 0155): JSON pointers (`/cards/*/number`), XML ' +
    'element paths (`/booking/card/cvv`), form field names (`cards[*][cvc]`); `*` is any one segment. Card numbers ' +
    'are found wherever they are; the mappings say which value is a card’s expiry (`expiration_date`, or ' +
    '`expiration_month` and `expiration_year`), holder name and security code.',
};

const UPSTREAM_HEADERS_SCHEMA: ApiPropertyOptions = {
  type: 'array',
  maxItems: 20,
  items: {
    type: 'object',
    required: ['name', 'value'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', maxLength: 100, description: 'An HTTP header name, kept in lower case.' },
      value: {
        type: 'string',
        writeOnly: true,
        minLength: 1,
        maxLength: 4096,
        description: 'Write-only: sealed at rest, never answered.',
      },
    },
  },
  description:
    'Headers set on every request sent to upstream_url, over a caller’s header of the same name (decision 0158): ' +
    'how the merchant’s endpoint authenticates the vault (an API key, a token). Values are secrets: sealed, never ' +
    'answered; answers list the names. Not hop-by-hop headers, host, content-*, expect, proxy-*, webhook-* (the ' +
    'vault’s signature) or x-vault-*. Replaced whole on update; [] removes them.',
};

const RECORD_BODIES_DOC =
  'Whether each request’s record keeps the request as sent to the upstream (card data replaced by ids) and the ' +
  'upstream’s answer as returned (card numbers masked), sealed, read through GET /vault-forward/inbound-requests/{id} ' +
  '(decision 0158). Off by default: turn it on to debug an integration.';
const RECORD_BODIES_RETENTION_DOC =
  `Days the records keep those bodies, 1–${RECORD_BODIES_MAX_DAYS} (${RECORD_BODIES_DEFAULT_DAYS} by default); the ` +
  'operator’s FORWARD_RECORD_BODY_RETENTION_DAYS caps it. Fixed for each record when it is made.';

const PATH_PREFIX = /^\/[^?#\s]{0,199}$/;

/** The fields create and update share, each optional here; create requires its own. */
class InboundRouteFields {
  @ApiPropertyOptional({ type: String, enum: FORWARD_METHODS, isArray: true, default: ['POST'] })
  @ValidateIf((_, v) => v !== undefined)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(FORWARD_METHODS, { each: true, message: `each entry must be one of ${FORWARD_METHODS.join(', ')}` })
  methods?: string[];

  @ApiPropertyOptional({
    type: [String],
    default: ['/'],
    maxItems: 20,
    description: 'The paths after /vault-inbound/{route_id} the route takes: each one and what lies below it.',
  })
  @ValidateIf((_, v) => v !== undefined)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @Matches(PATH_PREFIX, { each: true, message: 'each entry must be a path starting with /, without query' })
  path_prefixes?: string[];

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_BODY_BYTES, default: DEFAULT_BODY_BYTES })
  @ValidateIf((_, v) => v !== undefined)
  @IsInt()
  @Min(1)
  @Max(MAX_BODY_BYTES)
  max_body_bytes?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_TIMEOUT_SECONDS,
    default: DEFAULT_TIMEOUT_SECONDS,
    description: 'Seconds the upstream has to answer, headers and body together.',
  })
  @ValidateIf((_, v) => v !== undefined)
  @IsInt()
  @Min(1)
  @Max(MAX_TIMEOUT_SECONDS)
  timeout_seconds?: number;

  @ApiPropertyOptional(FIELD_MAPPINGS_SCHEMA)
  @ValidateIf((_, v) => v !== undefined)
  @Passes('isFieldMappings', fieldMappingsProblem)
  field_mappings?: FieldMappings;

  @ApiPropertyOptional(UPSTREAM_HEADERS_SCHEMA)
  @ValidateIf((_, v) => v !== undefined)
  @Passes('isUpstreamHeaders', upstreamHeadersProblem)
  upstream_headers?: UpstreamHeader[];

  @RecordBodiesInput(RECORD_BODIES_DOC)
  record_bodies?: boolean;

  @RecordBodiesRetentionInput(RECORD_BODIES_RETENTION_DOC)
  record_bodies_retention_days?: number;
}

export class CreateInboundRouteDto extends InboundRouteFields {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  display_name!: string;

  @ApiProperty({
    example: 'https://merchant.example/bookings',
    description:
      'The merchant’s endpoint: https (http only on hosts the operator lists in FORWARD_INSECURE_HOSTS), a public ' +
      'address, no query. The path after /vault-inbound/{route_id} is added to its path.',
  })
  @IsString()
  @Length(1, 2000)
  upstream_url!: string;

  @ApiProperty(CALLER_AUTHENTICATION_SCHEMA)
  @Passes('isCallerAuthentication', callerAuthenticationProblem)
  caller_authentication!: CallerAuthenticationInput;
}

/** PUT: only the fields sent change; caller_authentication is replaced whole (its secret with it). */
export class UpdateInboundRouteDto extends InboundRouteFields {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @ValidateIf((_, v) => v !== undefined)
  @IsString()
  @Length(1, 200)
  display_name?: string;

  @ApiPropertyOptional({ description: 'As on create.' })
  @ValidateIf((_, v) => v !== undefined)
  @IsString()
  @Length(1, 2000)
  upstream_url?: string;

  @ApiPropertyOptional(CALLER_AUTHENTICATION_SCHEMA)
  @ValidateIf((_, v) => v !== undefined)
  @Passes('isCallerAuthentication', callerAuthenticationProblem)
  caller_authentication?: CallerAuthenticationInput;
}

export class InboundRouteResponse {
  @ApiProperty({ type: String, enum: ['inbound-route'] })
  type!: 'inbound-route';
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty()
  merchant_account_id!: string;
  @ApiProperty()
  display_name!: string;
  @ApiProperty({ description: 'Where callers send requests: this path, then one of path_prefixes.' })
  entry_path!: string;
  @ApiProperty()
  upstream_url!: string;
  @ApiProperty({ type: String, enum: FORWARD_METHODS, isArray: true })
  methods!: string[];
  @ApiProperty({ type: [String] })
  path_prefixes!: string[];
  @ApiProperty({
    ...CALLER_AUTHENTICATION_SCHEMA,
    description: 'As created, without the secret.',
  })
  caller_authentication!: CallerSettings;
  @ApiProperty({ type: 'integer' })
  max_body_bytes!: number;
  @ApiProperty({ type: 'integer' })
  timeout_seconds!: number;
  @ApiProperty(FIELD_MAPPINGS_SCHEMA)
  field_mappings!: FieldMappings;
  @ApiProperty({
    type: 'array',
    items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
    description: 'The names of the headers set on the upstream request (their values are never answered).',
  })
  upstream_headers!: Array<{ name: string }>;
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

  static from(route: InboundRoute): InboundRouteResponse {
    return {
      type: 'inbound-route',
      id: route.id,
      merchant_account_id: route.merchantAccountId,
      display_name: route.displayName,
      entry_path: `/vault-inbound/${route.id}`,
      upstream_url: route.upstreamUrl,
      methods: route.methods,
      path_prefixes: route.pathPrefixes,
      caller_authentication: route.callerAuthentication,
      max_body_bytes: route.maxBodyBytes,
      timeout_seconds: route.timeoutSeconds,
      field_mappings: route.fieldMappings,
      upstream_headers: route.upstreamHeaderNames.map((name) => ({ name })),
      record_bodies: route.recordBodies,
      record_bodies_retention_days: route.recordBodiesRetentionDays,
      created_at: route.createdAt.toISOString(),
      updated_at: route.updatedAt.toISOString(),
    };
  }
}
