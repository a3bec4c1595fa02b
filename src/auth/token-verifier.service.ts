import { Inject, Injectable } from '@nestjs/common';
import { decodeProtectedHeader, errors as joseErrors, importJWK, jwtVerify, JWTPayload, CryptoKey } from 'jose';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config';
import { ApiKeyAlgorithm } from './api-key.entity';
import { ApiKeysService } from './api-keys.service';
import { unauthorized } from './auth.errors';

export interface VerifiedToken {
  keyId: string;
  keyMerchantAccountId: string | null;
  scopes: ReadonlySet<string>;
  /** Seconds since the epoch. */
  expiresAt: number;
}

interface CachedKey {
  algorithm: ApiKeyAlgorithm;
  merchantAccountId: string | null;
  key: CryptoKey;
}

const ACCEPTED_ALGORITHMS: readonly string[] = ['ES512', 'ES256'];
const MAX_TOKEN_LIFETIME_SECONDS = 3600;
/** Clocks of callers drift; a few seconds of slack on nbf/iat/exp avoids flaky 401s. */
const CLOCK_TOLERANCE_SECONDS = 5;
/** Public keys are cached briefly; a revoked key stops working within this time on every process. */
const KEY_CACHE_TTL_MS = 60_000;

/**
 * Verifies bearer JWTs against stored public keys. Signature verification is the costliest thing on
 * every request's path (ES512 ≈ 2 ms of CPU), so a verified token is remembered, keyed by the whole
 * token string, until its own `exp`: a caller that reuses a token pays for verification once.
 */
@Injectable()
export class TokenVerifier {
  private readonly verified: LRUCache<string, VerifiedToken> | null;
  private readonly keys = new LRUCache<string, CachedKey>({ max: 1000, ttl: KEY_CACHE_TTL_MS });
  /** Signature verifications performed (cache misses); for metrics and the benchmark. */
  verifications = 0;

  constructor(
    private readonly apiKeys: ApiKeysService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.verified = config.tokenCacheSize > 0 ? new LRUCache({ max: config.tokenCacheSize }) : null;
  }

  async verify(token: string): Promise<VerifiedToken> {
    const cached = this.verified?.get(token);
    if (cached) {
      if (cached.expiresAt + CLOCK_TOLERANCE_SECONDS > Date.now() / 1000) return cached;
      this.verified?.delete(token);
    }
    const result = await this.verifyUncached(token);
    // Kept until evicted; every hit re-checks exp above, so an expired token never passes.
    this.verified?.set(token, result);
    return result;
  }

  private async verifyUncached(token: string): Promise<VerifiedToken> {
    this.verifications++;
    let header;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw unauthorized('The bearer token is not a JWT.');
    }
    if (typeof header.alg !== 'string' || !ACCEPTED_ALGORITHMS.includes(header.alg)) {
      throw unauthorized(`Token algorithm "${String(header.alg)}" is not accepted; use ES512 or ES256.`);
    }
    if (typeof header.kid !== 'string' || header.kid.length === 0 || header.kid.length > 128) {
      throw unauthorized('The token header has no "kid" (the API key id).');
    }
    const key = await this.key(header.kid);
    if (!key) throw unauthorized('The token names an API key ("kid") that does not exist or was revoked.');
    if (key.algorithm !== header.alg) {
      throw unauthorized(`API key ${header.kid} signs with ${key.algorithm}, but the token says ${header.alg}.`);
    }

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, key.key, {
        algorithms: [key.algorithm],
        requiredClaims: ['iat', 'nbf', 'exp', 'jti'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
      }));
    } catch (error) {
      throw unauthorized(describeJoseError(error));
    }
    const { iat, exp } = payload as { iat: number; exp: number };
    if (exp - iat > MAX_TOKEN_LIFETIME_SECONDS) {
      throw unauthorized(`The token lives ${exp - iat} s; "exp" may be at most ${MAX_TOKEN_LIFETIME_SECONDS} s after "iat".`);
    }
    if (iat > Date.now() / 1000 + CLOCK_TOLERANCE_SECONDS) {
      throw unauthorized('The token was issued in the future ("iat").');
    }
    const scopes = payload.scopes;
    if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) {
      throw unauthorized('The token has no "scopes" claim (an array of strings).');
    }
    return {
      keyId: header.kid,
      keyMerchantAccountId: key.merchantAccountId,
      scopes: new Set(scopes as string[]),
      expiresAt: exp,
    };
  }

  private async key(id: string): Promise<CachedKey | null> {
    const cached = this.keys.get(id);
    if (cached) return cached;
    const row = await this.apiKeys.findActive(id);
    if (!row) return null;
    const entry: CachedKey = {
      algorithm: row.algorithm,
      merchantAccountId: row.merchantAccountId,
      key: (await importJWK(row.publicKey, row.algorithm)) as CryptoKey,
    };
    this.keys.set(id, entry);
    return entry;
  }
}

function describeJoseError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The token has expired ("exp").';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'The token is not valid yet ("nbf").';
    return `The token claim "${error.claim}" is missing or invalid (${error.reason}).`;
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'The token signature does not verify.';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'The token algorithm is not accepted.';
  if (error instanceof joseErrors.JWTInvalid || error instanceof joseErrors.JWSInvalid) return 'The token is malformed.';
  return 'The token could not be verified.';
}
