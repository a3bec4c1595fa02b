import { KeyObject, randomBytes } from 'node:crypto';
import OAuth from 'mastercard-oauth1-signer';
import { signOffLoop } from './private-key-signing';
import type { SignableRequest } from './signable';

/**
 * OAuth 1.0a with RSA-SHA256 and `oauth_body_hash`, as Mastercard's oauth1-signer libraries compute it.
 * Their parameter string joins the query parameters exactly as they appear in the URL (already
 * percent-encoded, not decoded and encoded again as RFC 5849 3.4.1.3 would) with the oauth_ parameters,
 * sorted by name and then by value, duplicates once; the whole string is then percent-encoded once.
 *
 * `mastercard-oauth1-signer` (Mastercard's Node.js signer) computes the body hash and writes the header.
 * The rest is ours, where that library departs from RFC 5849 and from Mastercard's Java and C# signers or
 * from what we hold (decision 0152): it reads the URL with `url.parse` (a deprecation warning on Node.js 24),
 * sorts names as `name,[object Set]` strings (`a%5B0%5D` before `a`), encodes only the first `!` and `*`
 * of the base string and leaves `'()` as they are, and signs on the event loop.
 */
interface OAuth1Parameters {
  consumerKey: string;
  /** Unix seconds. */
  timestamp: string;
  nonce: string;
}

/** The library's own functions that its types leave out (its tests call them one by one). */
const signer = OAuth as typeof OAuth & {
  getBodyHash(payload: Buffer | string): string;
  getAuthorizationString(oauthParams: ReadonlyMap<string, string>): string;
};

/** RFC 3986 unreserved characters stay; everything else is %XX (encodeURIComponent leaves !'()* alone). */
function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function oauthBodyHash(body: Buffer | undefined): string {
  return signer.getBodyHash(body ?? '');
}

/** Scheme and host lower-case, the port only when it is not the scheme's default, the path; no query. */
export function oauthBaseUri(url: URL): string {
  return `${url.protocol.toLowerCase()}//${url.host.toLowerCase()}${url.pathname}`;
}

/** The query parameters as sent, by name: a value set (a pair twice counts once), as the signer's map of sets. */
export function oauthQueryParameters(search: string): Map<string, Set<string>> {
  const params = new Map<string, Set<string>>();
  const query = search.startsWith('?') ? search.slice(1) : search;
  if (!query) return params;
  for (const pair of query.split('&')) {
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at) : pair;
    const value = at > 0 ? pair.slice(at + 1) : '';
    const values = params.get(key) ?? new Set<string>();
    values.add(value);
    params.set(key, values);
  }
  return params;
}

export function oauthParameterString(
  query: Map<string, Set<string>>,
  oauth: ReadonlyArray<readonly [string, string]>,
): string {
  const all = new Map<string, Set<string>>([...query].map(([k, v]) => [k, new Set(v)]));
  for (const [key, value] of oauth) all.set(key, (all.get(key) ?? new Set<string>()).add(value));
  const pairs: string[] = [];
  for (const key of [...all.keys()].sort(codeUnitOrder)) {
    const values = [...all.get(key)!];
    if (values.length > 1) values.sort(codeUnitOrder);
    for (const value of values) pairs.push(`${key}=${value}`);
  }
  return pairs.join('&');
}

function codeUnitOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function oauthSignatureBaseString(method: string, baseUri: string, parameterString: string): string {
  return `${method.toUpperCase()}&${percentEncode(baseUri)}&${percentEncode(parameterString)}`;
}

/** The oauth_ parameters in the order the libraries write them into the header. */
function oauthParameters(request: SignableRequest, p: OAuth1Parameters): Array<[string, string]> {
  return [
    ['oauth_body_hash', oauthBodyHash(request.body)],
    ['oauth_consumer_key', p.consumerKey],
    ['oauth_nonce', p.nonce],
    ['oauth_signature_method', 'RSA-SHA256'],
    ['oauth_timestamp', p.timestamp],
    ['oauth_version', '1.0'],
  ];
}

export async function oauthAuthorization(
  request: SignableRequest,
  p: OAuth1Parameters,
  key: KeyObject,
): Promise<string> {
  const oauth = oauthParameters(request, p);
  const base = oauthSignatureBaseString(
    request.method,
    oauthBaseUri(request.url),
    oauthParameterString(oauthQueryParameters(request.url.search), oauth),
  );
  const signature = (await signOffLoop('sha256', Buffer.from(base, 'utf8'), key)).toString('base64');
  return signer.getAuthorizationString(new Map([...oauth, ['oauth_signature', encodeURIComponent(signature)]]));
}

/**
 * 24 hex digits (96 random bits). The libraries send eight letters and digits picked by `byte % 62` (about
 * 47 bits, not evenly spread); a longer nonce makes a repeat within the provider's window less likely.
 */
export function oauthNonce(): string {
  return randomBytes(12).toString('hex');
}
