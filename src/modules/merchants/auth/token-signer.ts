import { randomUUID } from 'node:crypto';
import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { SYSTEM_CLOCK } from '../../../platform/time/clock';
import { ApiKeyAlgorithm } from './api-key.entity';

const DEFAULT_TOKEN_SCOPES = ['*.read', '*.write'];
const MAX_TOKEN_TTL_SECONDS = 3600;

/** The algorithm follows from the key's curve, so a caller cannot sign with a mismatched one. */
export function algorithmOf(privateKeyPem: string): ApiKeyAlgorithm {
  const key = createPrivateKey(privateKeyPem);
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType === 'ec' && curve === 'secp521r1') return 'ES512';
  if (key.asymmetricKeyType === 'ec' && curve === 'prime256v1') return 'ES256';
  throw new Error('the key is not an EC P-521 or P-256 private key');
}

/**
 * Mints an access token the way the official SDKs of the public API do (ES512/ES256, `kid` = key id,
 * `iat`/`nbf`/`exp`/`jti`, `scopes`). Used by the CLI and by tests; merchants use their SDK or this.
 */
export async function signToken(options: {
  privateKeyPem: string;
  keyId: string;
  scopes?: string[];
  ttlSeconds?: number;
}): Promise<string> {
  const ttl = options.ttlSeconds ?? MAX_TOKEN_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TOKEN_TTL_SECONDS) {
    throw new RangeError(`ttl must be a whole number of seconds between 1 and ${MAX_TOKEN_TTL_SECONDS}`);
  }
  const alg = algorithmOf(options.privateKeyPem);
  const now = Math.floor(SYSTEM_CLOCK.epochMs() / 1000);
  return new SignJWT({ scopes: options.scopes ?? DEFAULT_TOKEN_SCOPES })
    .setProtectedHeader({ alg, kid: options.keyId, typ: 'JWT' })
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + ttl)
    .setJti(randomUUID())
    .sign(createPrivateKey(options.privateKeyPem));
}
