/**
 * What of a request's headers and URLs may be kept in clear in logs and records (decision 0113): an
 * allow-list. A header whose name is not listed is kept as [Redacted], whatever it is called, so a
 * credential in `x-merchant-pass` or a misspelt `x-vault-forward-cryptogarms` leaks nothing. Card numbers
 * in what is kept are masked by the one detector (card-data/).
 */
import { isAuthenticationDataField, pathWithoutAuthenticationData } from '../card-data/authentication-data';
import { maskCardNumbers } from '../card-data/card-numbers';

export const REDACTED = '[Redacted]';

/** Request and response headers that describe a message and never carry a credential or card data. */
const CLEAR_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'connection',
  'content-encoding',
  'content-language',
  'content-length',
  'content-type',
  'date',
  'etag',
  'expect',
  'host',
  // Not idempotency-key: a caller may put anything in it, a card number included (decision 0139).
  'idempotent-replayed',
  'keep-alive',
  'last-modified',
  'location',
  'preference-applied',
  'prefer',
  'retry-after',
  'te',
  'transfer-encoding',
  'user-agent',
  'vary',
  'via',
  'x-request-id',
  'x-correlation-id',
  'x-merchant-account-id',
  'x-content-type-options',
  'x-frame-options',
  'link',
  'strict-transport-security',
  'content-security-policy',
  'request-id',
  'ratelimit',
  'ratelimit-limit',
  'ratelimit-policy',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  // The forward's own instructions (modules/forwarding/request/forward-headers.ts): ids, a method, numbers; the URLs as loggableUrl.
  'x-vault-forward-url',
  'x-vault-forward-http-method',
  'x-vault-forward-payment-methods',
  'x-vault-forward-checkout-session',
  'x-vault-forward-authentications',
  'x-vault-forward-timeout',
  'x-vault-forward-merchant-initiated',
  'x-vault-forward-max-attempts',
  'x-vault-forward-callback-url',
  // Ours on the answer: which record a forward left, and why a forward failed.
  'x-vault-forward-request-id',
  'x-vault-forward-error',
]);

/** Headers that hold a URL: kept as loggableUrl gives them (targets put API keys in query strings). */
const URL_HEADERS = new Set(['x-vault-forward-url', 'x-vault-forward-callback-url']);

/**
 * A header's value as logs and records keep it: [Redacted] unless the name is allow-listed (and never for a
 * name that is a security code's, decision 0136); URLs as
 * loggableUrl gives them; card numbers masked in what remains.
 */
export function keptHeaderValue(name: string, value: unknown): unknown {
  const lower = name.toLowerCase();
  if (!CLEAR_HEADERS.has(lower) || isAuthenticationDataField(lower)) return REDACTED;
  if (URL_HEADERS.has(lower)) return loggableUrl(value);
  if (typeof value === 'string') return maskCardNumbers(value);
  return Array.isArray(value) ? value.map((v: unknown) => (typeof v === 'string' ? maskCardNumbers(v) : v)) : value;
}

/**
 * A URL as logs and records keep it: no credentials, query or fragment (as written otherwise; a value
 * that does not parse is redacted whole, since where its secrets sit is unknown), card numbers in its
 * path masked, the segment after one that names a security code (`/cvv/737`) and a matrix parameter named as
 * one (`/pay;cvv=737`, decision 0136) redacted.
 */
export function loggableUrl(value: unknown): string {
  if (typeof value !== 'string') return REDACTED;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return REDACTED;
  }
  if (url.username || url.password) return recordedUrl(url);
  const query = value.indexOf('?');
  const fragment = value.indexOf('#');
  const end = Math.min(query < 0 ? value.length : query, fragment < 0 ? value.length : fragment);
  return keptPath(value.slice(0, end));
}

/** A parsed URL as a record keeps it: origin and path, masked as loggableUrl says. */
export function recordedUrl(url: URL): string {
  return keptPath(`${url.origin}${url.pathname}`);
}

function keptPath(text: string): string {
  const segments = maskCardNumbers(pathWithoutAuthenticationData(text)).split('/');
  for (let i = 1; i < segments.length; i++)
    if (segments[i] !== '' && isAuthenticationDataField(segments[i - 1])) segments[i] = REDACTED;
  return segments.join('/');
}

export function redactHeaders(headers: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!headers) return headers;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = keptHeaderValue(name, value);
  return out;
}

/** pino `redact` paths: a second net for objects logged outside the request serializers. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'authorization',
  '*.privateKey',
  '*.private_key',
  '*.password',
];

/**
 * Every log line as it is written: card numbers masked in whatever it holds (an error's message, a URL),
 * a bare JSON number turned into a string so the line stays JSON. The pino hook of every logger.
 */
export function maskedLogLine(line: string): string {
  return maskCardNumbers(line, { bareJson: true });
}
