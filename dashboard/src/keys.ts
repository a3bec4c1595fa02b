/**
 * API keys in the browser: a PKCS#8 PEM (what `npm run cli -- api-key create` writes) becomes a
 * non-extractable WebCrypto signing key, and tokens are minted here exactly as src/modules/merchants/auth/token-signer.ts
 * mints them (ES512/ES256, kid = RFC 7638 thumbprint, iat/nbf/exp/jti, scopes). The PEM text and the
 * extractable copy are dropped at once; the key lives in this tab's memory only.
 */
export type Algorithm = 'ES512' | 'ES256';

export interface SigningKey {
  keyId: string;
  algorithm: Algorithm;
  key: CryptoKey;
}

const CURVES: Array<{ curve: 'P-521' | 'P-256'; algorithm: Algorithm; hash: 'SHA-512' | 'SHA-256' }> = [
  { curve: 'P-521', algorithm: 'ES512', hash: 'SHA-512' },
  { curve: 'P-256', algorithm: 'ES256', hash: 'SHA-256' },
];

export class KeyFileError extends Error {}

function pemBody(pem: string): Uint8Array<ArrayBuffer> {
  if (pem.length > 64 * 1024) throw new KeyFileError('This file is too large to be an API key.');
  if (/-----BEGIN (EC |ENCRYPTED )PRIVATE KEY-----/.test(pem)) {
    throw new KeyFileError(
      'This key is not in PKCS#8 form. Convert it with: openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-pkcs8.pem',
    );
  }
  const match = /-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\s]+)-----END PRIVATE KEY-----/.exec(pem);
  if (!match)
    throw new KeyFileError(
      'No "BEGIN PRIVATE KEY" block found: choose the .pem file that `api-key create --out` wrote.',
    );
  const binary = atob(match[1].replace(/\s+/g, ''));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function base64url(bytes: Uint8Array | ArrayBuffer): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = '';
  for (const byte of view) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const utf8 = (text: string) => new TextEncoder().encode(text);

/** RFC 7638: SHA-256 over the required members in lexical order, no whitespace. */
async function thumbprint(jwk: JsonWebKey): Promise<string> {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return base64url(await crypto.subtle.digest('SHA-256', utf8(canonical)));
}

export async function importKeyFile(pem: string): Promise<SigningKey> {
  const der = pemBody(pem);
  for (const { curve, algorithm } of CURVES) {
    let extractable: CryptoKey;
    try {
      extractable = await crypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: curve }, true, ['sign']);
    } catch {
      continue;
    }
    const jwk = await crypto.subtle.exportKey('jwk', extractable);
    const keyId = await thumbprint(jwk);
    // Kept for signing only: the page itself cannot read the private key back out.
    const key = await crypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: curve }, false, ['sign']);
    der.fill(0);
    return { keyId, algorithm, key };
  }
  throw new KeyFileError('The key is not an EC P-521 or P-256 private key.');
}

export const TOKEN_TTL_SECONDS = 300;

export async function mintToken(
  signing: SigningKey,
  scopes: string[],
  ttlSeconds = TOKEN_TTL_SECONDS,
): Promise<{ token: string; expiresAt: number }> {
  const hash = CURVES.find((c) => c.algorithm === signing.algorithm)!.hash;
  const now = Math.floor(Date.now() / 1000);
  const header = { alg: signing.algorithm, kid: signing.keyId, typ: 'JWT' };
  const payload = { scopes, iat: now, nbf: now, exp: now + ttlSeconds, jti: crypto.randomUUID() };
  const input = `${base64url(utf8(JSON.stringify(header)))}.${base64url(utf8(JSON.stringify(payload)))}`;
  // WebCrypto's ECDSA signature is r||s, which is exactly the JWS form.
  const signature = await crypto.subtle.sign({ name: 'ECDSA', hash }, signing.key, utf8(input));
  return { token: `${input}.${base64url(signature)}`, expiresAt: payload.exp };
}

/** The `kid` and `exp` of a pasted token, to show and to warn before it expires (not verified here). */
export function readToken(token: string): { keyId: string | null; expiresAt: number | null } {
  const [header, payload] = token.split('.');
  const decode = (part: string | undefined) => {
    try {
      return JSON.parse(atob((part ?? '').replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
    } catch {
      return {};
    }
  };
  const h = decode(header);
  const p = decode(payload);
  return { keyId: typeof h.kid === 'string' ? h.kid : null, expiresAt: typeof p.exp === 'number' ? p.exp : null };
}
