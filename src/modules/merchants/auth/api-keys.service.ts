import { Injectable } from '@nestjs/common';
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { ProblemException } from '../../../platform/problem/problem';
import { SharedCaches } from '../../../platform/redis/shared-cache';
import { ApiKey, ApiKeyAlgorithm } from './api-key.entity';
import { apiKeyId, publicOnly } from './api-key-id';
import { ApiKeysRepository } from './api-keys.repository';
import { AuthErrors } from '../access/auth.errors';
import { ListApiKeysQuery } from './dto/api-key.dto';

/** The SharedCache of public keys (TokenVerifier); a notice for a key id drops it and its tokens everywhere. */
export const API_KEY_CACHE = 'api-keys';

export interface GeneratedApiKey {
  id: string;
  merchantAccountId: string | null;
  algorithm: ApiKeyAlgorithm;
  /** PKCS#8 PEM. Returned once to the creator; the service keeps only the public key. */
  privateKeyPem: string;
}

/**
 * Whose keys a caller may see and revoke: an instance key (and the CLI) every key, a merchant key its
 * own merchant account's keys only.
 */
export type ApiKeyOwner = { kind: 'instance' } | { kind: 'merchant'; merchantAccountId: string };

interface RevokedApiKey {
  key: ApiKey;
  /** Whether the revocation notice reached Redis; if not, other processes drop the key within KEY_CACHE_TTL_MS. */
  announced: boolean;
}

export { apiKeyId };

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly caches: SharedCaches,
  ) {}

  /**
   * ES512 (P-521) is the default, as in the public API the spec comes from; ES256 (P-256) verifies
   * about seven times faster and is offered for callers that mint many tokens.
   */
  async create(merchantAccountId: string | null, algorithm: ApiKeyAlgorithm = 'ES512'): Promise<GeneratedApiKey> {
    const { publicKey, privateKey } = await generateKeyPair(algorithm, { extractable: true });
    const publicJwk = publicOnly(await exportJWK(publicKey));
    const id = await apiKeyId(publicJwk);
    await this.keys.insert({ id, merchantAccountId, algorithm, publicKey: publicJwk });
    return { id, merchantAccountId, algorithm, privateKeyPem: await exportPKCS8(privateKey) };
  }

  /**
   * Removes a key that was never handed out: the CLI stores the row before it writes the private key,
   * and a key whose private half was lost must not stay behind as an orphan.
   */
  async discard(id: string): Promise<void> {
    await this.keys.delete(id);
  }

  /** The key a token names, if it exists and is not revoked. */
  findActive(id: string): Promise<ApiKey | null> {
    return this.keys.findActive(id);
  }

  /** Revoked keys are listed too (with revoked_at): the rows stay for audit. */
  list(owner: ApiKeyOwner, query: ListApiKeysQuery, keyset: KeysetRequest): Promise<ApiKey[]> {
    return this.keys.page(ownerId(owner), query.merchant_account_id, keyset);
  }

  /**
   * Sets revoked_at (the row stays, for audit) and drops the key and every token verified with it
   * from the caches of every process. An unknown, already revoked or invisible key is a 404, so a
   * merchant cannot learn whether another merchant's key id exists.
   */
  async revoke(owner: ApiKeyOwner, id: string): Promise<RevokedApiKey> {
    if (!(await this.keys.revoke(id, ownerId(owner)))) {
      throw new ProblemException(
        AuthErrors.apiKeyNotFound,
        `No active API key "${id.slice(0, 64)}" is visible to this caller.`,
        [{ location: 'path', name: 'id', message: 'unknown, already revoked, or another merchant account’s key' }],
      );
    }
    const announced = await this.caches.invalidate(API_KEY_CACHE, id);
    return { key: await this.keys.get(id), announced };
  }
}

/** The merchant account whose keys alone the owner sees; null for every key. */
function ownerId(owner: ApiKeyOwner): string | null {
  return owner.kind === 'merchant' ? owner.merchantAccountId : null;
}
