import { KindDescriptionOf, PEM_MAX } from './kind-types';
import { SIGNER_KINDS } from './signer-kinds';

/**
 * The one description of each authentication method kind. Validation (method-fields.ts), the OpenAPI
 * schemas (openapi.ts), GET /vault-forward/authentication-kinds (for forms) and the examples in
 * docs/authentication-methods.md all read it; a new kind is a new entry here plus its step at forward
 * time.
 */
export const AUTHENTICATION_KINDS = [
  'hmac-signature',
  'mutual-tls',
  'jwe-payload',
  'template-secrets',
  'http-signature',
  'oauth1-rsa',
  'aws-sigv4',
  'http-message-signature',
  'oauth2-client-credentials',
] as const;
export type AuthenticationKind = (typeof AUTHENTICATION_KINDS)[number];
export type { FieldDescription } from './kind-types';
type KindDescription = KindDescriptionOf<AuthenticationKind>;

export const SIGNING_TEMPLATE_VARIABLES = ['method', 'path', 'timestamp', 'body', 'body_sha256'] as const;
export const DEFAULT_SIGNING_TEMPLATE = '{timestamp}.{body}';

export const KINDS: Readonly<Record<AuthenticationKind, KindDescription>> = {
  'hmac-signature': {
    kind: 'hmac-signature',
    title: 'HMAC-signed request',
    description:
      'Signs each forwarded request with a shared secret: HMAC over the `template` string, placed in `header` (after `prefix`). ' +
      '`{body}` is the body byte for byte as it is sent downstream (after placeholders are filled, and after a ' +
      '`jwe-payload` method listed before this one).',
    fields: [
      {
        name: 'secret',
        secret: true,
        required: true,
        format: 'text',
        maxLength: 4096,
        description: 'The shared secret, used byte for byte as entered (UTF-8).',
      },
      {
        name: 'algorithm',
        secret: false,
        required: true,
        format: 'enum',
        enum: ['sha256', 'sha512'],
        maxLength: 6,
        description: 'HMAC hash function.',
      },
      {
        name: 'encoding',
        secret: false,
        required: true,
        format: 'enum',
        enum: ['hex', 'base64'],
        maxLength: 6,
        description: 'How the signature is written into the header.',
      },
      {
        name: 'header',
        secret: false,
        required: true,
        format: 'header-name',
        maxLength: 256,
        description: 'The request header that carries the signature.',
      },
      {
        name: 'timestamp_header',
        secret: false,
        required: false,
        format: 'header-name',
        maxLength: 256,
        description:
          'A request header that carries the signing time in unix seconds (the `{timestamp}` of the template).',
      },
      {
        name: 'template',
        secret: false,
        required: false,
        format: 'signing-template',
        default: DEFAULT_SIGNING_TEMPLATE,
        maxLength: 1024,
        description:
          'The signed string. Variables: `{method}`, `{path}` (path and query), `{timestamp}` (unix seconds), ' +
          '`{body}`, `{body_sha256}` (hex).',
      },
      {
        name: 'prefix',
        secret: false,
        required: false,
        format: 'header-value',
        maxLength: 256,
        description: 'Text written before the signature, e.g. `sha256=`.',
      },
    ],
    example: {
      secret: 'whsec_5f2b…',
      algorithm: 'sha256',
      encoding: 'hex',
      header: 'x-signature',
      timestamp_header: 'x-timestamp',
      template: '{timestamp}.{body}',
      prefix: 'sha256=',
    },
  },
  'mutual-tls': {
    kind: 'mutual-tls',
    title: 'Mutual TLS client certificate',
    description:
      'Presents a client certificate on the TLS connection to the target. Each method has its own connection ' +
      'pool, so TLS sessions are reused across forwards but never shared between methods or merchants.',
    fields: [
      {
        name: 'certificate',
        secret: false,
        required: true,
        format: 'pem-certificates',
        maxLength: PEM_MAX,
        description: 'PEM client certificate, leaf first; a chain may follow.',
      },
      {
        name: 'private_key',
        secret: true,
        required: true,
        format: 'pem-private-key',
        maxLength: PEM_MAX,
        description: 'PEM private key of the leaf certificate.',
      },
      {
        name: 'passphrase',
        secret: true,
        required: false,
        format: 'text',
        maxLength: 1024,
        description: 'Opens `private_key` when it is encrypted.',
      },
      {
        name: 'ca_certificates',
        secret: false,
        required: false,
        format: 'pem-certificates',
        maxLength: 4 * PEM_MAX,
        description: 'PEM bundle of certificate authorities to trust for this target instead of the system roots.',
      },
    ],
    example: {
      certificate: '-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----\n',
      private_key: '-----BEGIN PRIVATE KEY-----\n…\n-----END PRIVATE KEY-----\n',
    },
  },
  'jwe-payload': {
    kind: 'jwe-payload',
    title: 'Encrypted payload (JWE)',
    description:
      'Replaces the body, after placeholders are filled, with a compact JWE encrypted to the target’s public ' +
      'key; `content-type` becomes `application/jose`.',
    fields: [
      {
        name: 'public_key',
        secret: false,
        required: true,
        format: 'public-key',
        maxLength: PEM_MAX,
        description: 'The recipient’s public key: PEM (SPKI) or a JWK as JSON.',
      },
      {
        name: 'key_id',
        secret: false,
        required: false,
        format: 'text',
        maxLength: 256,
        description: 'Sent as the `kid` header parameter.',
      },
      {
        name: 'algorithm',
        secret: false,
        required: true,
        format: 'enum',
        enum: ['RSA-OAEP-256', 'ECDH-ES+A256KW'],
        maxLength: 16,
        description: 'Key management algorithm (`alg`).',
      },
      {
        name: 'encryption',
        secret: false,
        required: true,
        format: 'enum',
        enum: ['A256GCM', 'A128CBC-HS256'],
        maxLength: 16,
        description: 'Content encryption (`enc`).',
      },
      {
        name: 'content_type',
        secret: false,
        required: false,
        format: 'header-value',
        maxLength: 256,
        description: 'Sent as the `cty` header parameter.',
      },
      {
        name: 'response_private_key',
        secret: true,
        required: false,
        format: 'private-key',
        maxLength: PEM_MAX,
        description:
          'Your private key for encrypted answers (decision 0103): an answer that is a compact JWE (`application/jose`, ' +
          'or JSON `{"encData": "<JWE>"}` as Visa answers) is decrypted with it before the response rules, and the ' +
          'caller receives the plaintext; other answers pass untouched. Unencrypted PEM (PKCS#8, PKCS#1, SEC1) or a ' +
          'private JWK as JSON; RSA 2048 to 4096 bits or EC P-256, P-384, P-521. Answers show only ' +
          '`details.response_private_key` (type, size, public key thumbprint).',
      },
    ],
    example: {
      public_key: '-----BEGIN PUBLIC KEY-----\n…\n-----END PUBLIC KEY-----\n',
      key_id: 'psp-2026-01',
      algorithm: 'RSA-OAEP-256',
      encryption: 'A256GCM',
      content_type: 'application/json',
    },
  },
  'template-secrets': {
    kind: 'template-secrets',
    title: 'Secret for placeholder functions',
    description:
      'Holds one named secret for `{{ … | hmac_sha256(SECRET.name) }}` in a forwarded body or header; listing it ' +
      'changes nothing else in the request. Ours only (Gr4vy has no such kind); see docs/placeholders.md.',
    fields: [
      {
        name: 'name',
        secret: false,
        required: true,
        format: 'secret-name',
        maxLength: 64,
        description: 'What `SECRET.name` calls it: letters, digits, `_` and `-`.',
      },
      {
        name: 'value',
        secret: true,
        required: true,
        format: 'text',
        maxLength: 4096,
        description: 'The secret, used byte for byte as entered (UTF-8) as the HMAC key.',
      },
    ],
    example: { name: 'psp_signing_key', value: 'sk_9f2c…' },
  },
  ...SIGNER_KINDS,
  'oauth2-client-credentials': {
    kind: 'oauth2-client-credentials',
    title: 'OAuth 2.0 client credentials (Bearer token)',
    description:
      'Obtains an access token from `token_url` with the client credentials grant (RFC 6749 §4.4) and sends it as ' +
      '`Authorization: Bearer …`. The token is kept per method version until shortly before it expires, in memory ' +
      'and, with Redis, sealed by the vault for the other processes (decision 0123), and asked for once however ' +
      'many forwards need it; a 401 from the target drops it, so the ' +
      'next forward asks for a new one (the refused forward is not sent again). The token endpoint obeys the ' +
      'outbound policy of targets (https, or http for a host the operator lists in FORWARD_INSECURE_HOSTS; the ' +
      'same address guard), and its host must be one the config enables.',
    fields: [
      {
        name: 'token_url',
        secret: false,
        required: true,
        format: 'outbound-url',
        maxLength: 2048,
        description:
          'The token endpoint (https, or http when the operator lists its host in FORWARD_INSECURE_HOSTS, as for ' +
          'targets); its host must be one of the config’s hosts.',
      },
      {
        name: 'client_id',
        secret: false,
        required: true,
        format: 'text',
        maxLength: 1024,
        description: 'The client identifier the provider issued.',
      },
      {
        name: 'client_secret',
        secret: true,
        required: true,
        format: 'text',
        maxLength: 4096,
        description: 'The client secret, used byte for byte as entered.',
      },
      {
        name: 'scope',
        secret: false,
        required: false,
        format: 'text',
        maxLength: 2048,
        description: 'Sent as `scope` in the token request (space-separated scopes).',
      },
      {
        name: 'audience',
        secret: false,
        required: false,
        format: 'text',
        maxLength: 2048,
        description: 'Sent as `audience` in the token request, for providers that ask for one (Auth0, Okta).',
      },
      {
        name: 'client_auth',
        secret: false,
        required: false,
        format: 'enum',
        enum: ['basic', 'body'],
        default: 'basic',
        maxLength: 5,
        description:
          'How the client authenticates (RFC 6749 §2.3.1): `basic`, HTTP Basic with the form-encoded id and ' +
          'secret; `body`, `client_id` and `client_secret` in the form body.',
      },
    ],
    example: {
      token_url: 'https://api-m.sandbox.paypal.com/v1/oauth2/token',
      client_id: 'AbC1dE2fG3…',
      client_secret: 'EFg4hI5jK6…',
      client_auth: 'basic',
    },
  },
};

/** What `SECRET.name` may read (decision 0102): letters, digits, `_` and `-`, as the placeholder grammar takes them. */
export const SECRET_NAME = /^[A-Za-z0-9_-]+$/;
