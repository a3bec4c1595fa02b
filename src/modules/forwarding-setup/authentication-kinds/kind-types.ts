/** The shapes of the kind descriptions (kinds.ts, signer-kinds.ts): data, no behaviour. */

/**
 * How a field's value is checked. Values are stored exactly as entered (spec 5.3 rule 4): a format
 * refuses what can never work and never rewrites anything; doubtful values earn a warning instead.
 */
type FieldFormat =
  /** Any text. */
  | 'text'
  /** An HTTP header name (RFC 9110 token). */
  | 'header-name'
  /** Text that goes into a header value: no control characters, Latin-1 only. */
  | 'header-value'
  /** The signed string, with {method}, {path}, {timestamp}, {body} and {body_sha256}. */
  | 'signing-template'
  /** One of `enum`. */
  | 'enum'
  /** PEM certificates, leaf first. */
  | 'pem-certificates'
  /** A PEM private key (PKCS#8, PKCS#1 or SEC1; encrypted with `passphrase` or not). */
  | 'pem-private-key'
  /** A public key as PEM (SPKI or PKCS#1) or as a JWK (JSON). */
  | 'public-key'
  /** An unencrypted private key as PEM or as a private JWK (JSON), RSA 2048–4096 or EC P-256/384/521 (private-keys.ts). */
  | 'private-key'
  /** The name of a template secret, as `SECRET.name` spells it: letters, digits, `_` and `-`. */
  | 'secret-name'
  /** An identifier sent inside a header value: visible ASCII, no space, `"` or `\\`. */
  | 'key-id'
  /** Bytes written in base64 (RFC 4648, padded or not). */
  | 'base64'
  /** An AWS region or service name: lower-case letters, digits and `-`. */
  | 'aws-scope'
  /** RFC 9421 component identifiers separated by spaces: derived components (`@method`, …) and lower-case header names. */
  | 'signature-components'
  /** An RFC 9421 signature label (an RFC 8941 key): lower-case letter or `*`, then lower-case letters, digits, `_-.*`. */
  | 'signature-label'
  /** A whole number of seconds, 1 to 86400. */
  | 'seconds'
  /**
   * An absolute URL this process calls: https, or http for a host the operator lists in FORWARD_INSECURE_HOSTS
   * (the outbound policy, judged with the config); without user name, password or fragment.
   */
  | 'outbound-url';

export interface FieldDescription {
  name: string;
  /** Write-only: encrypted at rest, never returned, logged or echoed. */
  secret: boolean;
  required: boolean;
  format: FieldFormat;
  enum?: readonly string[];
  /** What an absent optional field means. */
  default?: string;
  maxLength: number;
  description: string;
}

export interface KindDescriptionOf<K extends string> {
  kind: K;
  title: string;
  description: string;
  fields: readonly FieldDescription[];
  /** A complete `fields` object, for the docs and the OpenAPI examples (placeholders for PEM text). */
  example: Readonly<Record<string, string>>;
}

export const PEM_MAX = 64 * 1024;
