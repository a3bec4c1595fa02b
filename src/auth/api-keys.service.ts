import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, JWK } from 'jose';
import { IsNull, Repository } from 'typeorm';
import { ApiKey, ApiKeyAlgorithm } from './api-key.entity';

export interface GeneratedApiKey {
  id: string;
  merchantAccountId: string | null;
  algorithm: ApiKeyAlgorithm;
  /** PKCS#8 PEM. Returned once to the creator; the service keeps only the public key. */
  privateKeyPem: string;
}

/** Only the public coordinates and the curve: no `d`, whatever the caller passes in. */
function publicOnly(jwk: JWK): JWK {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
}

export async function apiKeyId(jwk: JWK): Promise<string> {
  return calculateJwkThumbprint(publicOnly(jwk), 'sha256');
}

@Injectable()
export class ApiKeysService {
  constructor(@InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>) {}

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

  /** The key a token names, if it exists and is not revoked. */
  findActive(id: string): Promise<ApiKey | null> {
    return this.keys.findOne({ where: { id, revokedAt: IsNull() } });
  }
}
