import { createPrivateKey, createPublicKey } from 'node:crypto';
import { calculateJwkThumbprint, JWK } from 'jose';

/*
 * Kept apart from the service (no Nest, no TypeORM) so that the CLI's `token` command can load it
 * without booting anything.
 */

/** Only the public coordinates and the curve: no `d`, whatever the caller passes in. */
export function publicOnly(jwk: JWK): JWK {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
}

/** An API key's id is the RFC 7638 SHA-256 thumbprint of its public JWK. */
export async function apiKeyId(jwk: JWK): Promise<string> {
  return calculateJwkThumbprint(publicOnly(jwk), 'sha256');
}

/** The id of the API key whose private half this PEM is: a token's `kid` follows from the key file alone. */
export async function apiKeyIdOfPrivateKey(privateKeyPem: string): Promise<string> {
  const jwk = createPublicKey(createPrivateKey(privateKeyPem)).export({ format: 'jwk' });
  return apiKeyId(jwk);
}
