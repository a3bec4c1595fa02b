import { AUTHENTICATION_KINDS, AuthenticationKind, KINDS } from './kinds';

/**
 * OpenAPI components built from the kind descriptions: for each kind a request schema (its fields,
 * secrets marked writeOnly) and a response schema (non-secret fields only), joined by oneOf with
 * `kind` as the discriminator. Merged into the document by bootstrap/api-app.ts.
 */
type Schema = Record<string, unknown>;

function pascal(kind: AuthenticationKind): string {
  return kind
    .split('-')
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');
}

export function requestSchemaName(kind: AuthenticationKind): string {
  return `ForwardAuthentication${pascal(kind)}Request`;
}

export function responseSchemaName(kind: AuthenticationKind): string {
  return `ForwardAuthentication${pascal(kind)}Response`;
}

export const UPDATE_SCHEMA_NAME = 'ForwardAuthenticationUpdateRequest';

function ref(name: string): Schema {
  return { $ref: `#/components/schemas/${name}` };
}

function fieldsSchema(kind: AuthenticationKind, secrets: boolean): Schema {
  const fields = KINDS[kind].fields.filter((f) => secrets || !f.secret);
  const properties: Record<string, Schema> = {};
  for (const f of fields) {
    properties[f.name] = {
      type: 'string',
      description: f.description + (f.secret ? ' Secret: write-only, encrypted at rest, never returned.' : ''),
      maxLength: f.maxLength,
      ...(f.enum ? { enum: [...f.enum] } : {}),
      ...(f.default !== undefined ? { default: f.default } : {}),
      ...(f.secret ? { writeOnly: true } : {}),
      'x-format': f.format,
    };
  }
  const example = Object.fromEntries(
    Object.entries(KINDS[kind].example).filter(([name]) => fields.some((f) => f.name === name)),
  );
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    required: fields.filter((f) => f.required).map((f) => f.name),
    example,
  };
}

export function forwardAuthenticationSchemas(): Record<string, Schema> {
  const schemas: Record<string, Schema> = {};
  for (const kind of AUTHENTICATION_KINDS) {
    const description = `${KINDS[kind].title}. ${KINDS[kind].description}`;
    schemas[requestSchemaName(kind)] = {
      type: 'object',
      description,
      required: ['kind', 'label', 'fields'],
      additionalProperties: false,
      properties: {
        kind: { type: 'string', enum: [kind] },
        label: { type: 'string', minLength: 1, maxLength: 100, example: 'Acme PSP signing key' },
        fields: fieldsSchema(kind, true),
      },
    };
    schemas[responseSchemaName(kind)] = {
      type: 'object',
      description,
      required: [
        'type',
        'id',
        'config_id',
        'merchant_account_id',
        'kind',
        'label',
        'fields',
        'details',
        'warnings',
        'created_at',
        'updated_at',
      ],
      properties: {
        type: { type: 'string', enum: ['vault-forward-authentication'] },
        id: { type: 'string', format: 'uuid' },
        config_id: { type: 'string', format: 'uuid' },
        merchant_account_id: { type: 'string' },
        kind: { type: 'string', enum: [kind] },
        label: { type: 'string' },
        fields: fieldsSchema(kind, false),
        details: {
          type: 'object',
          additionalProperties: true,
          description:
            'Facts derived from the non-secret fields (certificates: subject, issuer, not_after, fingerprint_sha256; public key type).',
        },
        warnings: {
          type: 'array',
          items: {
            type: 'object',
            properties: { code: { type: 'string' }, field: { type: 'string' }, message: { type: 'string' } },
            required: ['code', 'field', 'message'],
          },
        },
        created_at: { type: 'string', example: '2026-11-20T09:14:03.123456+00:00' },
        updated_at: { type: 'string', example: '2026-11-20T09:14:03.123456+00:00' },
      },
    };
  }
  schemas[UPDATE_SCHEMA_NAME] = {
    type: 'object',
    description:
      'A new label, and/or a whole new fields set for the method’s kind (secrets are never merged with the stored ones).',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      label: { type: 'string', minLength: 1, maxLength: 100 },
      fields: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description:
          `The complete fields of the method’s kind: ` +
          `${AUTHENTICATION_KINDS.map((k) => requestSchemaName(k) + '.fields').join(', ')}.`,
      },
    },
  };
  return schemas;
}

function oneOfByKind(name: (kind: AuthenticationKind) => string): Schema {
  return {
    oneOf: AUTHENTICATION_KINDS.map((k) => ref(name(k))),
    discriminator: {
      propertyName: 'kind',
      mapping: Object.fromEntries(AUTHENTICATION_KINDS.map((k) => [k, `#/components/schemas/${name(k)}`])),
    },
  };
}

export const REQUEST_SCHEMA = oneOfByKind(requestSchemaName);
export const RESPONSE_SCHEMA = oneOfByKind(responseSchemaName);
