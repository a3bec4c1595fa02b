import { constants, createHash, createHmac, KeyObject } from 'node:crypto';
import { signOffLoop } from './private-key-signing';
import type { SignableRequest } from './signable';

/**
 * HTTP Message Signatures (RFC 9421) over a request, with its body's Content-Digest (RFC 9530). The
 * derived components a request has (2.2) and header fields by their lower-case names are covered; a
 * header the request does not carry is left out of the covered list for that request (the list is in
 * Signature-Input, so the verifier sees what was covered).
 */
type HttpSignatureAlgorithm = 'ed25519' | 'ecdsa-p256-sha256' | 'rsa-pss-sha512' | 'hmac-sha256';
type ContentDigestAlgorithm = 'sha-256' | 'sha-512';

/** RFC 8941 sf-string: `"` and `\` escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** RFC 9530: `sha-256=:<base64>:`. */
export function contentDigest(algorithm: ContentDigestAlgorithm, body: Buffer | undefined): string {
  const digest = createHash(algorithm === 'sha-256' ? 'sha256' : 'sha512')
    .update(body ?? Buffer.alloc(0))
    .digest('base64');
  return `${algorithm}=:${digest}:`;
}

/** A component's value (2.1, 2.2), or undefined when the request has no such header. */
function componentValue(request: SignableRequest, id: string): string | undefined {
  const url = request.url;
  switch (id) {
    case '@method':
      return request.method;
    case '@target-uri':
      return `${url.protocol}//${url.host}${url.pathname}${url.search}`;
    case '@authority':
      return url.host.toLowerCase();
    case '@scheme':
      return url.protocol.slice(0, -1).toLowerCase();
    case '@request-target':
      return `${url.pathname}${url.search}`;
    case '@path':
      return url.pathname || '/';
    case '@query':
      return url.search || '?';
    default: {
      const value = request.headers[id];
      return value === undefined ? undefined : value.trim();
    }
  }
}

/** `("@method" "content-type");created=…;keyid="…"`: the params in the order given, integers bare. */
function signatureParams(components: readonly string[], params: ReadonlyArray<[string, string | number]>): string {
  const list = `(${components.map(sfString).join(' ')})`;
  return list + params.map(([k, v]) => `;${k}=${typeof v === 'number' ? String(v) : sfString(v)}`).join('');
}

/** The signature base (2.5): one line per covered component, then `"@signature-params"`. */
export function signatureBase(
  request: SignableRequest,
  components: readonly string[],
  params: ReadonlyArray<[string, string | number]>,
): { base: string; input: string } {
  const input = signatureParams(components, params);
  const lines = components.map((id) => `${sfString(id)}: ${componentValue(request, id) ?? ''}`);
  return { base: [...lines, `"@signature-params": ${input}`].join('\n'), input };
}

type SigningKey =
  | { algorithm: 'hmac-sha256'; secret: KeyObject }
  | { algorithm: Exclude<HttpSignatureAlgorithm, 'hmac-sha256'>; key: KeyObject };

/** The signature of a base; a private key signs off the event loop (private-key-signing.ts), HMAC at once. */
export async function signBase(base: string, key: SigningKey): Promise<Buffer> {
  const data = Buffer.from(base, 'utf8');
  switch (key.algorithm) {
    case 'hmac-sha256':
      return createHmac('sha256', key.secret).update(data).digest();
    case 'ed25519':
      return signOffLoop(null, data, key.key);
    case 'ecdsa-p256-sha256':
      return signOffLoop('sha256', data, { key: key.key, dsaEncoding: 'ieee-p1363' });
    case 'rsa-pss-sha512':
      return signOffLoop('sha512', data, { key: key.key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 });
  }
}

export interface MessageSignatureOptions {
  keyId: string;
  signingKey: SigningKey;
  components: readonly string[];
  label: string;
  tag: string | undefined;
  expiresIn: number | undefined;
  digest: ContentDigestAlgorithm;
}

/** Content-Digest (when covered), Signature-Input and Signature for the request as it will be sent. */
export async function messageSignatureHeaders(
  request: SignableRequest,
  o: MessageSignatureOptions,
  nowMs: number,
): Promise<Record<string, string>> {
  const added: Record<string, string> = {};
  if (o.components.includes('content-digest')) added['content-digest'] = contentDigest(o.digest, request.body);
  const signed: SignableRequest = { ...request, headers: { ...request.headers, ...added } };
  const covered = o.components.filter((id) => componentValue(signed, id) !== undefined);
  const created = Math.floor(nowMs / 1000);
  const params: Array<[string, string | number]> = [['created', created]];
  if (o.expiresIn !== undefined) params.push(['expires', created + o.expiresIn]);
  params.push(['keyid', o.keyId], ['alg', o.signingKey.algorithm]);
  if (o.tag !== undefined) params.push(['tag', o.tag]);
  const { base, input } = signatureBase(signed, covered, params);
  const signature = (await signBase(base, o.signingKey)).toString('base64');
  return { ...added, 'signature-input': `${o.label}=${input}`, signature: `${o.label}=:${signature}:` };
}
