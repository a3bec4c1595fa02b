import { Hash } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';
import { hostHeader, SignableRequest } from './signable';

/**
 * AWS Signature Version 4, by `@smithy/signature-v4` (the AWS SDK for JavaScript's own signer) with
 * node:crypto's SHA-256 (`@smithy/core`'s Hash). Every header the request carries is signed, with `host`,
 * except those AWS's SDKs never sign (`authorization`, `user-agent`, hop-by-hop names, `date`, `proxy-*`,
 * `sec-*`: proxies and clients may change them); the session token is signed too. Outside S3 the path is
 * normalised and encoded again, as the SDKs do; S3's is signed as sent, with `x-amz-content-sha256`.
 */
interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string | undefined;
  region: string;
  service: string;
}

/** The SDK's SHA-256 constructor: `new Sha256(secret?)` hashes, or HMACs with a secret. */
const Sha256 = Hash.bind(null, 'sha256');

/** The library's signer, keeping the canonical request and string to sign it builds (the suite checks both). */
class RecordingSignatureV4 extends SignatureV4 {
  canonicalRequest = '';
  stringToSign = '';

  protected override createCanonicalRequest(...args: Parameters<SignatureV4['createCanonicalRequest']>): string {
    this.canonicalRequest = super.createCanonicalRequest(...args);
    return this.canonicalRequest;
  }

  protected override async createStringToSign(...args: Parameters<SignatureV4['createStringToSign']>): Promise<string> {
    this.stringToSign = await super.createStringToSign(...args);
    return this.stringToSign;
  }
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The query as sent, decoded pair by pair (`+` stays a plus; a malformed escape is kept as it is), in the
 * SDK's shape: a name once, or with every value it has. The library encodes and sorts it.
 */
function queryOf(search: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const pair of search.replace(/^\?/, '').split('&')) {
    if (!pair) continue;
    const at = pair.indexOf('=');
    const key = decoded(at < 0 ? pair : pair.slice(0, at));
    const value = decoded(at < 0 ? '' : pair.slice(at + 1));
    const known = query[key];
    query[key] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value];
  }
  return query;
}

interface SigV4Result {
  /** The headers to add: x-amz-date, the session token and (S3) the payload hash, and authorization. */
  headers: Record<string, string>;
  canonicalRequest: string;
  stringToSign: string;
}

/** What the signer adds to a request (anything else it returns is the request's own). */
const ADDED = ['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256', 'authorization'];

export async function sigV4(
  request: SignableRequest,
  credentials: AwsCredentials,
  nowMs: number,
): Promise<SigV4Result> {
  const signer = new RecordingSignatureV4({
    credentials: {
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      sessionToken: credentials.sessionToken,
    },
    region: credentials.region,
    service: credentials.service,
    sha256: Sha256,
    uriEscapePath: credentials.service !== 's3',
    applyChecksum: credentials.service === 's3',
  });
  const url = request.url;
  const signed = await signer.sign(
    {
      method: request.method.toUpperCase(),
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname || '/',
      query: queryOf(url.search),
      headers: { ...request.headers, host: hostHeader(url) },
      body: request.body,
    },
    { signingDate: new Date(nowMs) },
  );
  const headers: Record<string, string> = {};
  for (const name of ADDED) {
    const value = signed.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  return { headers, canonicalRequest: signer.canonicalRequest, stringToSign: signer.stringToSign };
}
