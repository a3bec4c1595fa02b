import { constants, createHash, createHmac, KeyObject } from 'node:crypto';
import { httpbis, type Request as SignatureRequest } from 'http-message-signatures';
import { type BareItem, type InnerList, type Item, serializeDictionary, serializeInnerList } from 'structured-headers';
import { signOffLoop } from './private-key-signing';
import type { SignableRequest } from './signable';

/**
 * HTTP Message Signatures (RFC 9421) over a request, with its body's Content-Digest (RFC 9530). The
 * components' values and the signature base are `http-message-signatures`' (the derived components of 2.2,
 * header fields by their lower-case names); `Signature-Input` and `Signature` are written by
 * `structured-headers` (RFC 8941). A header the request does not carry is left out of the covered list for
 * that request (the list is in Signature-Input, so the verifier sees what was covered). The signature
 * itself is ours: a private key signs off the event loop (private-key-signing.ts, decision 0144), which the
 * library's `createSigner` would do on it. Its `signMessage` is not used either: it renames the label when
 * the request already carries a signature of that name, and the label is part of the verifier's contract
 * (decision 0152).
 */
type HttpSignatureAlgorithm = 'ed25519' | 'ecdsa-p256-sha256' | 'rsa-pss-sha512' | 'hmac-sha256';
type ContentDigestAlgorithm = 'sha-256' | 'sha-512';

/** RFC 9530: `sha-256=:<base64>:`. */
export function contentDigest(algorithm: ContentDigestAlgorithm, body: Buffer | undefined): string {
  const digest = createHash(algorithm === 'sha-256' ? 'sha256' : 'sha512')
    .update(body ?? Buffer.alloc(0))
    .digest();
  return serializeDictionary(new Map([[algorithm, [digest, new Map<string, BareItem>()]]]));
}

/** The request as the library reads it; the target URI is RFC 9110's (no user info, no fragment: never sent). */
function signatureRequest(request: SignableRequest): SignatureRequest {
  const url = request.url;
  return {
    method: request.method,
    url: new URL(`${url.protocol}//${url.host}${url.pathname}${url.search}`),
    headers: { ...request.headers },
  };
}

/** `("@method" "content-type");created=…;keyid="…"`: the params in the order given, integers bare. */
function signatureParams(components: readonly string[], params: ReadonlyArray<[string, string | number]>): InnerList {
  return [components.map((id): Item => [id, new Map<string, BareItem>()]), new Map(params)];
}

/** The signature base (2.5): one line per covered component, then `"@signature-params"`. */
export function signatureBase(
  request: SignableRequest,
  components: readonly string[],
  params: ReadonlyArray<[string, string | number]>,
): { base: string; input: string } {
  const covered = httpbis.createSignatureBase({ fields: [...components] }, signatureRequest(request));
  const input = serializeInnerList(signatureParams(components, params));
  return { base: httpbis.formatSignatureBase([...covered, ['"@signature-params"', [input]]]), input };
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
  const covered = o.components.filter((id) => id.startsWith('@') || signed.headers[id] !== undefined);
  const created = Math.floor(nowMs / 1000);
  const params: Array<[string, string | number]> = [['created', created]];
  if (o.expiresIn !== undefined) params.push(['expires', created + o.expiresIn]);
  params.push(['keyid', o.keyId], ['alg', o.signingKey.algorithm]);
  if (o.tag !== undefined) params.push(['tag', o.tag]);
  const { base } = signatureBase(signed, covered, params);
  const signature = await signBase(base, o.signingKey);
  return {
    ...added,
    'signature-input': serializeDictionary(new Map([[o.label, signatureParams(covered, params)]])),
    signature: serializeDictionary(new Map([[o.label, [signature, new Map<string, BareItem>()]]])),
  };
}
