import { X509Certificate } from 'node:crypto';

/**
 * How the callers of an inbound route prove themselves (decision 0154), one kind per route:
 * - `shared-secret`: a header holding a secret the merchant shares with its partner;
 * - `hmac`: a signature of the body, Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature` over
 *   `id.timestamp.body`) or HMAC-SHA256 of the body in a header of the route's (hex or base64, `sha256=` allowed);
 * - `mutual-tls`: a client certificate issued by one of `ca_certificates`, passed on by the TLS terminator;
 * - `none`: anyone, at most `rate_limit.requests` per `rate_limit.per_seconds` for the route.
 * Secrets are write-only: sealed at rest (the route's sealed columns), never answered.
 */
const CALLER_KINDS = ['shared-secret', 'hmac', 'mutual-tls', 'none'] as const;
const HMAC_SCHEMES = ['standard-webhooks', 'hmac-sha256'] as const;
const SIGNATURE_ENCODINGS = ['hex', 'base64'] as const;

export type CallerSettings =
  | { kind: 'shared-secret'; header: string }
  | { kind: 'hmac'; scheme: 'standard-webhooks'; tolerance_seconds: number }
  | { kind: 'hmac'; scheme: 'hmac-sha256'; header: string; encoding: (typeof SIGNATURE_ENCODINGS)[number] }
  | { kind: 'mutual-tls'; ca_certificates: string }
  | { kind: 'none'; rate_limit: { requests: number; per_seconds: number } };

/** What a route is created or updated with: the settings, and the secret of the kinds that have one. */
export type CallerAuthenticationInput = CallerSettings & { secret?: string };

const MIN_SECRET_BYTES = 16;
const MAX_SECRET_CHARS = 512;
const DEFAULT_TOLERANCE_SECONDS = 300;
const MAX_CA_CERTIFICATES_CHARS = 64 * 1024;
/** Standard Webhooks' secrets: `whsec_` and the key's bytes in base64. */
const WHSEC = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/**
 * Headers a caller may not be asked to put its secret or signature in: the message's own, the hop's, ours, and
 * those a proxy rewrites.
 */
const RESERVED_HEADERS = new RegExp(
  '^(host|content-[a-z-]+|transfer-encoding|connection|keep-alive|te|trailer|upgrade|expect|cookie|' +
    'webhook-[a-z-]+|x-vault-[a-z0-9-]*|x-forwarded-[a-z-]+|forwarded)$',
);

const fields = (value: object) => Object.keys(value);

/** Why a caller_authentication object is refused (never repeating a secret), or null. */
export function callerAuthenticationProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object with a kind';
  const input = value as Record<string, unknown>;
  const allowed = (...names: string[]) => {
    const extra = fields(input).find((name) => !['kind', ...names].includes(name));
    return extra === undefined ? null : `${String(extra).slice(0, 40)} is not a field of kind ${String(input.kind)}`;
  };
  switch (input.kind) {
    case 'shared-secret':
      return allowed('header', 'secret') ?? headerProblem(input.header) ?? secretProblem(input.secret);
    case 'hmac':
      if (input.scheme === 'standard-webhooks')
        return (
          allowed('scheme', 'secret', 'tolerance_seconds') ??
          secretProblem(input.secret) ??
          integerProblem('tolerance_seconds', input.tolerance_seconds, 1, 3600)
        );
      if (input.scheme === 'hmac-sha256') {
        if (input.encoding !== undefined && !SIGNATURE_ENCODINGS.includes(input.encoding as 'hex'))
          return 'encoding must be hex or base64';
        return (
          allowed('scheme', 'header', 'secret', 'encoding') ??
          headerProblem(input.header) ??
          secretProblem(input.secret)
        );
      }
      return `scheme must be one of ${HMAC_SCHEMES.join(', ')}`;
    case 'mutual-tls':
      return allowed('ca_certificates') ?? caCertificatesProblem(input.ca_certificates);
    case 'none':
      return allowed('rate_limit') ?? rateLimitProblem(input.rate_limit);
    default:
      return `kind must be one of ${CALLER_KINDS.join(', ')}`;
  }
}

function headerProblem(value: unknown): string | null {
  if (typeof value !== 'string' || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/.test(value))
    return 'header must be an HTTP header name';
  return RESERVED_HEADERS.test(value.toLowerCase()) ? 'header may not be one the message or a proxy sets' : null;
}

function secretProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'secret is required: a string';
  if (value.length > MAX_SECRET_CHARS) return `secret must be at most ${MAX_SECRET_CHARS} characters`;
  return secretBytes(value).length < MIN_SECRET_BYTES ? `secret must hold at least ${MIN_SECRET_BYTES} bytes` : null;
}

function integerProblem(name: string, value: unknown, min: number, max: number): string | null {
  if (value === undefined) return null;
  return Number.isInteger(value) && (value as number) >= min && (value as number) <= max
    ? null
    : `${name} must be a whole number from ${min} to ${max}`;
}

function rateLimitProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'rate_limit is required with kind none: {"requests", "per_seconds"}';
  const limit = value as Record<string, unknown>;
  if (fields(limit).some((name) => name !== 'requests' && name !== 'per_seconds'))
    return 'rate_limit has only requests and per_seconds';
  if (limit.requests === undefined || limit.per_seconds === undefined)
    return 'rate_limit needs requests and per_seconds';
  return (
    integerProblem('rate_limit.requests', limit.requests, 1, 100_000) ??
    integerProblem('rate_limit.per_seconds', limit.per_seconds, 1, 86_400)
  );
}

function caCertificatesProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_CA_CERTIFICATES_CHARS)
    return `ca_certificates must be a PEM bundle of at most ${MAX_CA_CERTIFICATES_CHARS} characters`;
  const certificates = caCertificates(value);
  if (certificates === null) return 'ca_certificates must hold PEM certificates only, each one readable';
  if (certificates.length === 0) return 'ca_certificates must hold at least one certificate';
  return certificates.every((certificate) => certificate.ca)
    ? null
    : 'ca_certificates must hold certificate authorities (basicConstraints CA:TRUE)';
}

/** The certificates of a PEM bundle, or null when a block does not read as one. */
export function caCertificates(bundle: string): X509Certificate[] | null {
  const blocks = bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  const rest = bundle.replace(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g, '').trim();
  if (rest !== '') return null;
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    return null;
  }
}

/** The bytes a secret keys an HMAC with: a `whsec_` secret's decoded key (Standard Webhooks), else its UTF-8. */
export function secretBytes(secret: string): Buffer {
  const whsec = WHSEC.exec(secret);
  return whsec ? Buffer.from(whsec[1], 'base64') : Buffer.from(secret, 'utf8');
}

/** The settings kept in the clear (defaults filled in) and the secret to seal, from a checked input. */
export function splitCallerAuthentication(input: CallerAuthenticationInput): {
  settings: CallerSettings;
  secret: string | null;
} {
  switch (input.kind) {
    case 'shared-secret':
      return { settings: { kind: input.kind, header: input.header.toLowerCase() }, secret: input.secret! };
    case 'hmac':
      return input.scheme === 'standard-webhooks'
        ? {
            settings: {
              kind: 'hmac',
              scheme: input.scheme,
              tolerance_seconds: input.tolerance_seconds ?? DEFAULT_TOLERANCE_SECONDS,
            },
            secret: input.secret!,
          }
        : {
            settings: {
              kind: 'hmac',
              scheme: input.scheme,
              header: input.header.toLowerCase(),
              encoding: input.encoding ?? 'hex',
            },
            secret: input.secret!,
          };
    case 'mutual-tls':
      return { settings: { kind: input.kind, ca_certificates: input.ca_certificates.trim() }, secret: null };
    case 'none':
      return { settings: { kind: input.kind, rate_limit: { ...input.rate_limit } }, secret: null };
  }
}

/** The header a caller's credential arrives in, which never goes on to the upstream; null for none. */
export function credentialHeader(settings: CallerSettings): string | null {
  if (settings.kind === 'shared-secret') return settings.header;
  if (settings.kind === 'hmac' && settings.scheme === 'hmac-sha256') return settings.header;
  return null;
}
