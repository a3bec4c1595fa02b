/**
 * Headers whose values never reach a log line. `x-vault-forward-header-*` carry downstream
 * credentials by design (spec 5.2), so the whole family is matched by prefix, not listed one by one.
 */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);
/**
 * `x-vault-forward-cryptogram…` too: per-request cryptograms of network tokens (docs/decisions/0100),
 * by prefix so that a misspelt `x-vault-forward-cryptogram` (refused, but logged) leaks nothing either.
 */
const SECRET_HEADER_PREFIXES = ['x-vault-forward-header-', 'x-vault-forward-cryptogram'];

export const REDACTED = '[Redacted]';

export function isSecretHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return SECRET_HEADERS.has(lower) || SECRET_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

/**
 * Targets and callback receivers put API keys and tokens in their query strings (and a refused URL
 * may carry user:password@), so both URLs are logged as loggableUrl gives them.
 */
const URL_HEADERS = new Set(['x-vault-forward-url', 'x-vault-forward-callback-url']);

/**
 * The target URL as the forward record keeps it: no credentials, query or fragment (as written
 * otherwise). A value that does not parse is redacted whole, since where its secrets sit is unknown.
 */
export function loggableUrl(value: unknown): string {
  if (typeof value !== 'string') return REDACTED;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return REDACTED;
  }
  if (url.username || url.password) return `${url.origin}${url.pathname}`;
  const query = value.indexOf('?');
  const fragment = value.indexOf('#');
  const end = Math.min(query < 0 ? value.length : query, fragment < 0 ? value.length : fragment);
  return value.slice(0, end);
}

export function redactHeaders(headers: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!headers) return headers;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = isSecretHeader(name) ? REDACTED : URL_HEADERS.has(name.toLowerCase()) ? loggableUrl(value) : value;
  }
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
