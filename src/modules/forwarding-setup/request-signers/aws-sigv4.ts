import { createHash, createHmac } from 'node:crypto';
import { percentEncode } from './mastercard-oauth1';
import { hostHeader, SignableRequest } from './signable';

/**
 * AWS Signature Version 4 (docs.aws.amazon.com "Create a signed AWS API request"), composed of
 * node:crypto's SHA-256 and HMAC. Every header the request carries is signed, with `host`, except those
 * AWS's SDKs never sign (proxies and clients may change them); the session token is signed too.
 */
interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string | undefined;
  region: string;
  service: string;
}

/** As @smithy/signature-v4's ALWAYS_UNSIGNABLE_HEADERS. */
const UNSIGNABLE = new Set([
  'authorization',
  'cache-control',
  'connection',
  'expect',
  'from',
  'keep-alive',
  'max-forwards',
  'pragma',
  'referer',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'x-amzn-trace-id',
]);

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** `20150830T123600Z`. */
function amzDate(nowMs: number): string {
  return new Date(nowMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Path segments encoded again (S3: as sent); query pairs decoded, RFC 3986-encoded, sorted by name then value. */
function canonicalUri(url: URL, service: string): string {
  if (service === 's3') return url.pathname || '/';
  return (url.pathname || '/').split('/').map(percentEncode).join('/');
}

function canonicalQuery(search: string): string {
  const query = search.startsWith('?') ? search.slice(1) : search;
  if (!query) return '';
  return query
    .split('&')
    .filter((pair) => pair.length > 0)
    .map((pair) => {
      const at = pair.indexOf('=');
      const key = at < 0 ? pair : pair.slice(0, at);
      const value = at < 0 ? '' : pair.slice(at + 1);
      return [percentEncode(decoded(key)), percentEncode(decoded(value))] as const;
    })
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

interface SigV4Result {
  /** The headers to add: x-amz-date, the session token and (S3) the payload hash, and authorization. */
  headers: Record<string, string>;
  canonicalRequest: string;
  stringToSign: string;
}

export function sigV4(request: SignableRequest, credentials: AwsCredentials, nowMs: number): SigV4Result {
  const date = amzDate(nowMs);
  const payloadHash = sha256Hex(request.body ?? Buffer.alloc(0));
  const added: Record<string, string> = { 'x-amz-date': date };
  if (credentials.sessionToken !== undefined) added['x-amz-security-token'] = credentials.sessionToken;
  if (credentials.service === 's3') added['x-amz-content-sha256'] = payloadHash;
  const signed = new Map<string, string>([['host', hostHeader(request.url)]]);
  for (const [name, value] of Object.entries({ ...request.headers, ...added })) {
    const lower = name.toLowerCase();
    if (!UNSIGNABLE.has(lower) && lower !== 'host') signed.set(lower, value.trim().replace(/ +/g, ' '));
  }
  const names = [...signed.keys()].sort();
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalUri(request.url, credentials.service),
    canonicalQuery(request.url.search),
    ...names.map((n) => `${n}:${signed.get(n)}`),
    '',
    signedHeaders,
    payloadHash,
  ].join('\n');
  const day = date.slice(0, 8);
  const scope = `${day}/${credentials.region}/${credentials.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, sha256Hex(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${credentials.secretAccessKey}`, day);
  key = hmac(key, credentials.region);
  key = hmac(key, credentials.service);
  key = hmac(key, 'aws4_request');
  const signature = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  added.authorization =
    `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, ` +
    `SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { headers: added, canonicalRequest, stringToSign };
}
