import { AUTHENTICATION_KINDS, AuthenticationKind, KINDS } from '../authentication-kinds/kinds';
import { DEFINITION_KINDS } from '../definitions/definition';
import {
  GR4VY_RESPONSE_SCHEMA_NAME,
  requestSchemaName,
  responseSchemaName,
} from '../authentication-kinds/schema-names';

/**
 * OpenAPI components built from the kind descriptions: for each kind a request schema (its fields,
 * secrets marked writeOnly) and a response schema (non-secret fields only), joined by oneOf with
 * `kind` as the discriminator. Merged into the document by app/api-app.ts.
 */
type Schema = Record<string, unknown>;

export const UPDATE_SCHEMA_NAME = 'ForwardAuthenticationUpdateRequest';
const GR4VY_REQUEST = 'ForwardAuthenticationGr4vyRequest';
const OUR_UPDATE = 'ForwardAuthenticationOurUpdateRequest';
const GR4VY_UPDATE = 'ForwardAuthenticationGr4vyUpdateRequest';
/** The name PageOf gives the list of ForwardAuthenticationResponse, replaced here so its items are either shape. */
const PAGE_SCHEMA_NAME = 'ForwardAuthenticationPage';

const GR4VY_FIELDS_DESCRIPTION =
  'The fields the config’s definition declares for this kind (GET /vault-forward/definitions/{id}), as key and ' +
  'value; each maps onto a field of our kind. Missing required, unknown or malformed keys are refused naming the key.';

function gr4vyEntries(minValue: number, description: string): Schema {
  return {
    type: 'array',
    maxItems: 20,
    description,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['key', 'value'],
      properties: {
        key: { type: 'string', minLength: 1, maxLength: 50 },
        value: { type: 'string', minLength: minValue },
      },
    },
  };
}

function ref(name: string): Schema {
  return { $ref: `#/components/schemas/${name}` };
}

/** details.response_private_key (decision 0103): present when the method holds a response key; never the key. */
const RESPONSE_KEY_FACTS: Schema = {
  type: 'object',
  description:
    'The method holds a private key for encrypted answers: its type, size and public key thumbprint, never the key.',
  required: ['type', 'public_key_thumbprint'],
  properties: {
    type: { type: 'string', enum: ['rsa', 'ec'] },
    size_bits: { type: 'integer' },
    curve: { type: 'string', enum: ['P-256', 'P-384', 'P-521'] },
    public_key_thumbprint: {
      type: 'string',
      description: 'RFC 7638 SHA-256 JWK thumbprint (base64url) of the public key.',
    },
  },
};

function fieldsSchema(kind: AuthenticationKind, secrets: boolean): Schema {
  const fields = KINDS[kind].fields.filter((f) => secrets || !f.secret);
  const properties: Record<string, Schema> = {};
  for (const f of fields) {
    properties[f.name] = {
      type: 'string',
      description: f.description + (f.secret ? ' Secret: write-only, encrypted at rest, never returned.' : ''),
      maxLength: f.maxLength,
      ...(f.enum ? { enum: [...f.enum] } : {}),
      ...(f.format === 'outbound-url' ? { format: 'uri', pattern: '^https?://' } : {}),
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
            'Facts derived from the non-secret fields (certificates: subject, issuer, not_after, fingerprint_sha256; public key ' +
            'type), and of a response key only its type, size and public key thumbprint (`response_private_key`).',
          ...(kind === 'jwe-payload' ? { properties: { response_private_key: RESPONSE_KEY_FACTS } } : {}),
        },
        ...warningsAndTimes(),
      },
    };
  }
  const kinds = [...DEFINITION_KINDS];
  schemas[GR4VY_REQUEST] = {
    type: 'object',
    description:
      'Gr4vy’s shape: `mle`, `mtls` and `signature` are our jwe-payload, mutual-tls and hmac-signature (or the ' +
      'signing kind the definition’s signature names: http-signature, oauth1-rsa, aws-sigv4, http-message-signature), ' +
      'and `oauth2`, ours, is oauth2-client-credentials; the fields are those of the config’s definition, and the ' +
      'method is answered in this shape.',
    required: ['kind', 'display_name', 'fields'],
    additionalProperties: false,
    properties: {
      kind: { type: 'string', enum: kinds },
      display_name: { type: 'string', minLength: 1, maxLength: 50 },
      fields: gr4vyEntries(0, GR4VY_FIELDS_DESCRIPTION),
    },
  };
  schemas[GR4VY_RESPONSE_SCHEMA_NAME] = {
    type: 'object',
    description: 'A method created in Gr4vy’s shape (PCIForwardConfigAuthentication), plus our additive fields.',
    required: [
      'type',
      'id',
      'config_id',
      'merchant_account_id',
      'kind',
      'label',
      'display_name',
      'fields',
      'details',
      'warnings',
      'created_at',
      'updated_at',
      'creator',
    ],
    properties: {
      type: { type: 'string', enum: ['vault-forward-config-authentication'] },
      id: { type: 'string', format: 'uuid' },
      config_id: { type: 'string', format: 'uuid' },
      merchant_account_id: { type: 'string' },
      kind: { type: 'string', enum: kinds },
      label: { type: 'string' },
      display_name: { type: 'string' },
      fields: gr4vyEntries(
        1,
        'The non-secret fields that are set, by the definition’s keys. Secret fields are never returned.',
      ),
      details: { type: 'object', additionalProperties: true, properties: { response_private_key: RESPONSE_KEY_FACTS } },
      ...warningsAndTimes(),
      creator: {
        type: 'object',
        nullable: true,
        properties: { id: { type: 'string' }, name: { type: 'string' }, email_address: { type: 'string' } },
        description: 'Always null: this service has API keys, no users.',
      },
    },
  };
  schemas[GR4VY_UPDATE] = {
    type: 'object',
    description:
      'Gr4vy’s update: the fields sent replace those stored, the others stay; `""` unsets an optional field.',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      display_name: { type: 'string', minLength: 1, maxLength: 50 },
      fields: gr4vyEntries(0, GR4VY_FIELDS_DESCRIPTION),
    },
  };
  schemas[PAGE_SCHEMA_NAME] = {
    type: 'object',
    required: ['items', 'limit', 'next_cursor', 'previous_cursor'],
    properties: {
      items: {
        type: 'array',
        items: {
          oneOf: [...AUTHENTICATION_KINDS.map((k) => ref(responseSchemaName(k))), ref(GR4VY_RESPONSE_SCHEMA_NAME)],
        },
        description: 'Each method in the shape it was created in.',
      },
      limit: { type: 'number', example: 20, description: 'The page size applied to this response.' },
      next_cursor: {
        type: 'string',
        nullable: true,
        description: 'Cursor of the next (older) page; null on the last page.',
      },
      previous_cursor: {
        type: 'string',
        nullable: true,
        description: 'Cursor of the previous (newer) page; null on the first page.',
      },
    },
  };
  schemas[UPDATE_SCHEMA_NAME] = { oneOf: [ref(OUR_UPDATE), ref(GR4VY_UPDATE)] };
  schemas[OUR_UPDATE] = {
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

/** Ours by kind, and Gr4vy's for its three kinds. */
function oneOfByKind(name: (kind: AuthenticationKind) => string, gr4vy: string): Schema {
  return {
    oneOf: [...AUTHENTICATION_KINDS.map((k) => ref(name(k))), ref(gr4vy)],
    discriminator: {
      propertyName: 'kind',
      mapping: {
        ...Object.fromEntries(AUTHENTICATION_KINDS.map((k) => [k, `#/components/schemas/${name(k)}`])),
        ...Object.fromEntries(DEFINITION_KINDS.map((k) => [k, `#/components/schemas/${gr4vy}`])),
      },
    },
  };
}

export const REQUEST_SCHEMA = oneOfByKind(requestSchemaName, GR4VY_REQUEST);
export const RESPONSE_SCHEMA = oneOfByKind(responseSchemaName, GR4VY_RESPONSE_SCHEMA_NAME);

/** The `warnings` list and the two timestamps, as both shapes of a method answer them. */
function warningsAndTimes(): Record<string, Schema> {
  const timestamp = { type: 'string', example: '2026-11-20T09:14:03.123456+00:00' };
  return {
    warnings: {
      type: 'array',
      items: {
        type: 'object',
        properties: { code: { type: 'string' }, field: { type: 'string' }, message: { type: 'string' } },
        required: ['code', 'field', 'message'],
      },
    },
    created_at: { ...timestamp },
    updated_at: { ...timestamp },
  };
}
