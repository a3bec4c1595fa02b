/**
 * Web origins as a browser names them (`scheme://host[:port]`): a merchant's pages allowed to embed Secure Fields
 * (`secure_fields_origins`), the `parentOrigin` a frame is asked for, and SECURE_FIELDS_ORIGIN itself. One parser,
 * so what a merchant lists and what a browser sends compare as equal strings (decision 0140).
 */

/** A normalised origin, or why the text is none. */
type WebOriginCheck = { origin: string } | { problem: string };

/** Host names only (letters, digits, dots and dashes once punycoded), or a bracketed IPv6 address. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/;

/** Longest text taken as an origin: no real one comes near it. */
const MAX_ORIGIN_LENGTH = 300;

/** `localhost` and `*.localhost`, which browsers resolve to loopback and treat as secure contexts over http. */
export function isLocalhostName(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

/**
 * `raw` as a normalised origin (lowercase host, punycode, default port dropped): http or https, a host, an optional
 * port, nothing else (no user, path, query or fragment; one trailing slash is forgiven). https is required unless the
 * host is localhost or *.localhost.
 */
export function webOrigin(raw: string): WebOriginCheck {
  if (raw.length === 0 || raw.length > MAX_ORIGIN_LENGTH)
    return { problem: `must be an origin of at most ${MAX_ORIGIN_LENGTH} characters` };
  if (/[\s\\]/.test(raw)) return { problem: 'must be an origin (scheme://host[:port]) without spaces or backslashes' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'must be an origin: scheme://host[:port]' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: 'must use https:// (or http://)' };
  if (url.username || url.password || raw.includes('@')) return { problem: 'must not carry a user or password' };
  const rest = raw.slice(raw.indexOf('//') + 2);
  if (/[?#]/.test(raw) || (url.pathname !== '/' && url.pathname !== '') || /\/./.test(rest))
    return { problem: 'must be an origin only: no path, query or fragment' };
  if (!HOST.test(url.hostname)) return { problem: 'must name a host (letters, digits, dots and dashes)' };
  if (url.protocol === 'http:' && !isLocalhostName(url.hostname))
    return { problem: 'must use https:// (http:// only for localhost and *.localhost)' };
  return { origin: url.origin };
}
