import { Inject, Injectable } from '@nestjs/common';
import { decodeProtectedHeader, errors as joseErrors, importJWK, jwtVerify, JWTPayload, CryptoKey } from 'jose';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG } from '../../../platform/config/config.module';
import type { AppConfig } from '../../../platform/config/config';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { ApiKeyAlgorithm } from './api-key.entity';
import { SharedCache, SharedCaches } from '../../../platform/redis/shared-cache';
import { API_KEY_CACHE, ApiKeysService } from './api-keys.service';
import { unauthorized } from '../access/auth.errors';

interface VerifiedToken {
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
  /** Epoch ms when the row was read: no token verified with this entry is kept past its expiry. */
  loadedAt: number;
}

const ACCEPTED_ALGORITHMS: readonly string[] = ['ES512', 'ES256'];
const MAX_TOKEN_LIFETIME_SECONDS = 3600;
/** Clocks of callers drift; a few seconds of slack on nbf/iat/exp avoids flaky 401s. */
const CLOCK_TOLERANCE_SECONDS = 5;
/**
 * How long a public key, and any token verified with it, is trusted without looking at the database
 * again. A revocation reaches every process at once through the invalidation notice; this is the
 * bound when the notice is lost (Redis down while revoking, or a CLI run without REDIS_URL).
 */
export const KEY_CACHE_TTL_MS = 60_000;

/**
 * Verifies bearer JWTs against stored public keys. Signature verification is the costliest thing on
 * every request's path (ES512 ≈ 2 ms of CPU), so a verified token is remembered, keyed by the whole
 * token string, until its own `exp` or until the cached key it was verified with expires, whichever
 * is first: a caller that reuses a token pays for verification about once a minute.
 *
 * Revoking a key drops its cache entry in every process (SharedCache "api-keys"), and with it every
 * cached token of that key, through a per-key index of cached tokens, so a cache hit costs one
 * lookup and nothing more.
 */
@Injectable()
export class TokenVerifier {
  private readonly verified: LRUCache<string, VerifiedToken> | null;
  private readonly keys: SharedCache<CachedKey>;
  /** The cached tokens of each key, kept in step with `verified` by its dispose hook. */
  private readonly tokensByKey = new Map<string, Set<string>>();
  /** Signature verifications performed (cache misses); for metrics and the benchmark. */
  verifications = 0;

  constructor(
    private readonly apiKeys: ApiKeysService,
    @Inject(APP_CONFIG) config: AppConfig,
    caches: SharedCaches,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.verified =
      config.tokenCacheSize > 0
        ? new LRUCache<string, VerifiedToken>({
            max: config.tokenCacheSize,
            dispose: (value, token) => this.unindex(value.keyId, token),
          })
        : null;
    this.keys = caches.create<CachedKey>(API_KEY_CACHE, {
      max: 1000,
      ttlMs: KEY_CACHE_TTL_MS,
      onDrop: (keyId) => this.forgetTokens(keyId),
    });
  }

  async verify(token: string): Promise<VerifiedToken> {
    const cached = this.verified?.get(token);
    if (cached) {
      if (cached.expiresAt + CLOCK_TOLERANCE_SECONDS > this.clock.epochMs() / 1000) return cached;
      this.verified?.delete(token);
    }
    // A revocation that lands while this token is being verified must not be undone by storing it.
    const snapshot = this.keys.snapshot();
    const { result, key } = await this.verifyUncached(token);
    if (this.verified && this.keys.snapshot() === snapshot) {
      const nowMs = this.clock.epochMs();
      const ttl = Math.min(
        key.loadedAt + KEY_CACHE_TTL_MS - nowMs,
        (result.expiresAt + CLOCK_TOLERANCE_SECONDS) * 1000 - nowMs,
      );
      if (ttl > 0) {
        this.verified.set(token, result, { ttl });
        let tokens = this.tokensByKey.get(result.keyId);
        if (!tokens) this.tokensByKey.set(result.keyId, (tokens = new Set()));
        tokens.add(token);
      }
    }
    return result;
  }

  private forgetTokens(keyId: string | null): void {
    if (!this.verified) return;
    if (keyId === null) {
      this.verified.clear();
      this.tokensByKey.clear();
      return;
    }
    const tokens = this.tokensByKey.get(keyId);
    if (!tokens) return;
    this.tokensByKey.delete(keyId);
    for (const token of tokens) this.verified.delete(token);
  }

  private unindex(keyId: string, token: string): void {
    const tokens = this.tokensByKey.get(keyId);
    if (!tokens) return;
    tokens.delete(token);
    if (tokens.size === 0) this.tokensByKey.delete(keyId);
  }

  private async verifyUncached(token: string): Promise<{ result: VerifiedToken; key: CachedKey }> {
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
        currentDate: new Date(this.clock.epochMs()),
      }));
    } catch (error) {
      throw unauthorized(describeJoseError(error));
    }
    const { iat, exp } = payload as { iat: number; exp: number };
    if (exp - iat > MAX_TOKEN_LIFETIME_SECONDS) {
      throw unauthorized(
        `The token lives ${exp - iat} s; "exp" may be at most ${MAX_TOKEN_LIFETIME_SECONDS} s after "iat".`,
      );
    }
    if (iat > this.clock.epochMs() / 1000 + CLOCK_TOLERANCE_SECONDS) {
      throw unauthorized('The token was issued in the future ("iat").');
    }
    const scopes = payload.scopes;
    if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) {
      throw unauthorized('The token has no "scopes" claim (an array of strings).');
    }
    return {
      key,
      result: {
        keyId: header.kid,
        keyMerchantAccountId: key.merchantAccountId,
        scopes: new Set(scopes),
        expiresAt: exp,
      },
    };
  }

  private async key(id: string): Promise<CachedKey | null> {
    const cached = this.keys.get(id);
    if (cached) return cached;
    const snapshot = this.keys.snapshot();
    const loadedAt = this.clock.epochMs();
    const row = await this.apiKeys.findActive(id);
    if (!row) return null;
    const entry: CachedKey = {
      algorithm: row.algorithm,
      merchantAccountId: row.merchantAccountId,
      key: (await importJWK(row.publicKey, row.algorithm)) as CryptoKey,
      loadedAt,
    };
    this.keys.set(id, entry, snapshot);
    return entry;
  }
}

function describeJoseError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The token has expired ("exp").';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    // jose reports a missing required claim with the same class as a failed check: tell them apart.
    if (error.reason === 'missing')
      return `The token has no "${error.claim}" claim; "iat", "nbf", "exp" and "jti" are required.`;
    if (error.claim === 'nbf') return 'The token is not valid yet ("nbf").';
    return `The token claim "${error.claim}" is missing or invalid (${error.reason}).`;
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'The token signature does not verify.';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'The token algorithm is not accepted.';
  if (error instanceof joseErrors.JWTInvalid || error instanceof joseErrors.JWSInvalid)
    return 'The token is malformed.';
  return 'The token could not be verified.';
}
