import { KindDescriptionOf, PEM_MAX } from './kind-types';

/**
 * The kinds that sign a request as a provider's own scheme defines it: each signs the request as it is
 * sent (after placeholders are filled, and after a `jwe-payload` method listed before it). Spread into
 * KINDS (kinds.ts); the signers themselves are in src/modules/forwarding-setup/request-signers/.
 */
type SignerKind = 'http-signature' | 'oauth1-rsa' | 'aws-sigv4' | 'http-message-signature';

const AS_SENT =
  'Signs the request as it is sent: after placeholders are filled, and after a `jwe-payload` method listed before ' +
  'this one.';

export const DEFAULT_SIGNATURE_COMPONENTS = '@method @target-uri content-digest content-type';

export const SIGNER_KINDS: Readonly<Record<SignerKind, KindDescriptionOf<SignerKind>>> = {
  'http-signature': {
    kind: 'http-signature',
    title: 'Cybersource HTTP Signature',
    description:
      'Cybersource’s REST HTTP Signature, as its SDKs compute it: adds `v-c-merchant-id`, `date`, `digest` ' +
      '(`SHA-256=` and the base64 SHA-256 of the body; not for GET and DELETE) and `signature` (HMAC-SHA256 with the ' +
      'base64-decoded shared secret over `host`, `date`, `request-target`, `digest` and `v-c-merchant-id`). ' +
      AS_SENT,
    fields: [
      {
        name: 'merchant_id',
        secret: false,
        required: true,
        format: 'key-id',
        maxLength: 256,
        description: 'Your Cybersource merchant id, sent as `v-c-merchant-id` and signed.',
      },
      {
        name: 'key_id',
        secret: false,
        required: true,
        format: 'key-id',
        maxLength: 256,
        description: 'The id of the shared secret key (a UUID in the Business Center), sent as `keyid`.',
      },
      {
        name: 'shared_secret',
        secret: true,
        required: true,
        format: 'base64',
        maxLength: 1024,
        description:
          'The shared secret key, base64 as the Business Center shows it; its decoded bytes are the HMAC key.',
      },
    ],
    example: {
      merchant_id: 'acme_corp',
      key_id: '08c94330-f618-42a3-b09d-e1e43be5efda',
      shared_secret: 'c2hhcmVkLXNlY3JldC1leGFtcGxlLW5vdC1yZWFs',
    },
  },
  'oauth1-rsa': {
    kind: 'oauth1-rsa',
    title: 'OAuth 1.0a RSA-SHA256 (Mastercard)',
    description:
      'Sets `Authorization: OAuth …` as Mastercard’s oauth1-signer libraries do: RSA-SHA256 (PKCS#1 v1.5) over the ' +
      'signature base string, with `oauth_body_hash` (base64 SHA-256 of the body), a fresh nonce and the time. ' +
      AS_SENT,
    fields: [
      {
        name: 'consumer_key',
        secret: false,
        required: true,
        format: 'key-id',
        maxLength: 512,
        description: 'The consumer key of your Mastercard Developers project, sent as `oauth_consumer_key`.',
      },
      {
        name: 'private_key',
        secret: true,
        required: true,
        format: 'pem-private-key',
        maxLength: PEM_MAX,
        description: 'The RSA signing key of the project, unencrypted PEM (PKCS#8 or PKCS#1).',
      },
    ],
    example: {
      consumer_key: 'Ab3CdE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9dE1f!4f9a0c2e6b8d1f3a5c7e9b2d4f6a8c0e',
      private_key: '-----BEGIN PRIVATE KEY-----\n…\n-----END PRIVATE KEY-----\n',
    },
  },
  'aws-sigv4': {
    kind: 'aws-sigv4',
    title: 'AWS Signature Version 4',
    description:
      'Signs the request with AWS Signature Version 4: adds `x-amz-date`, `x-amz-security-token` with a session ' +
      "token, `x-amz-content-sha256` for S3, and `authorization`; every header sent is signed, with `host`, except those AWS's own SDKs " +
      'leave unsigned (`date`, `proxy-*`, `sec-*`, hop-by-hop headers such as `connection`). ' +
      AS_SENT,
    fields: [
      {
        name: 'access_key_id',
        secret: false,
        required: true,
        format: 'key-id',
        maxLength: 128,
        description: 'The access key id (`AKIA…` or, with a session token, `ASIA…`).',
      },
      {
        name: 'secret_access_key',
        secret: true,
        required: true,
        format: 'text',
        maxLength: 256,
        description: 'The secret access key, used byte for byte as entered.',
      },
      {
        name: 'session_token',
        secret: true,
        required: false,
        format: 'header-value',
        maxLength: 4096,
        description: 'The session token of temporary credentials, sent and signed as `x-amz-security-token`.',
      },
      {
        name: 'region',
        secret: false,
        required: true,
        format: 'aws-scope',
        maxLength: 64,
        description: 'The region of the credential scope, e.g. `eu-west-1`.',
      },
      {
        name: 'service',
        secret: false,
        required: true,
        format: 'aws-scope',
        maxLength: 64,
        description:
          'The service of the credential scope, e.g. `execute-api` (`s3` signs its path as sent and adds `x-amz-content-sha256`).',
      },
    ],
    example: {
      access_key_id: 'AKIAIOSFODNN7EXAMPLE',
      secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      region: 'eu-west-1',
      service: 'execute-api',
    },
  },
  'http-message-signature': {
    kind: 'http-message-signature',
    title: 'HTTP Message Signature (RFC 9421)',
    description:
      'Adds `Content-Digest` (RFC 9530) when `components` cover it, `Signature-Input` and `Signature` (RFC 9421), ' +
      'with the parameters `created`, `expires` (with `expires_in`), `keyid`, `alg` and `tag`. A header component ' +
      'the request does not carry is left out of that request’s covered list. ' +
      AS_SENT,
    fields: [
      {
        name: 'key_id',
        secret: false,
        required: true,
        format: 'key-id',
        maxLength: 256,
        description: 'Sent as the `keyid` parameter.',
      },
      {
        name: 'algorithm',
        secret: false,
        required: true,
        format: 'enum',
        enum: ['ed25519', 'ecdsa-p256-sha256', 'rsa-pss-sha512', 'hmac-sha256'],
        maxLength: 17,
        description: 'The RFC 9421 algorithm, also sent as the `alg` parameter.',
      },
      {
        name: 'private_key',
        secret: true,
        required: false,
        format: 'pem-private-key',
        maxLength: PEM_MAX,
        description:
          'Unencrypted PEM private key (PKCS#8; PKCS#1 or SEC1 too) of the algorithm: Ed25519, EC P-256 or RSA. ' +
          'Required unless `algorithm` is `hmac-sha256`.',
      },
      {
        name: 'secret',
        secret: true,
        required: false,
        format: 'base64',
        maxLength: 1024,
        description: 'The shared key of `hmac-sha256`, base64; required with it and refused with the others.',
      },
      {
        name: 'components',
        secret: false,
        required: false,
        format: 'signature-components',
        default: DEFAULT_SIGNATURE_COMPONENTS,
        maxLength: 1024,
        description:
          'The covered components, separated by spaces: `@method`, `@target-uri`, `@authority`, `@scheme`, ' +
          '`@request-target`, `@path`, `@query`, and lower-case header names (`content-digest` is added by the method).',
      },
      {
        name: 'content_digest',
        secret: false,
        required: false,
        format: 'enum',
        enum: ['sha-256', 'sha-512'],
        default: 'sha-256',
        maxLength: 7,
        description: 'The hash of `Content-Digest`.',
      },
      {
        name: 'label',
        secret: false,
        required: false,
        format: 'signature-label',
        default: 'sig1',
        maxLength: 64,
        description: 'The signature’s label in `Signature-Input` and `Signature`.',
      },
      {
        name: 'tag',
        secret: false,
        required: false,
        format: 'key-id',
        maxLength: 256,
        description: 'Sent as the `tag` parameter (the application the signature is for).',
      },
      {
        name: 'expires_in',
        secret: false,
        required: false,
        format: 'seconds',
        maxLength: 5,
        description: 'Seconds after `created` for the `expires` parameter; none when absent.',
      },
    ],
    example: {
      key_id: 'acme-2026-01',
      algorithm: 'ed25519',
      private_key: '-----BEGIN PRIVATE KEY-----\n…\n-----END PRIVATE KEY-----\n',
      components: DEFAULT_SIGNATURE_COMPONENTS,
      label: 'sig1',
      expires_in: '300',
    },
  },
};
