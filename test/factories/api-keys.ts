import { ApiKeyAlgorithm } from '../../src/modules/merchants/auth/api-key.entity';
import { ApiKeysService, GeneratedApiKey } from '../../src/modules/merchants/auth/api-keys.service';
import { signToken } from '../../src/modules/merchants/auth/token-signer';
import type { TestApp } from '../support/test-app';

export interface TestKey extends GeneratedApiKey {
  /** A fresh token for this key (default scopes `*.read`, `*.write`). */
  token(scopes?: string[], ttlSeconds?: number): Promise<string>;
}

export async function createApiKey(
  t: TestApp,
  merchantAccountId: string | null,
  algorithm: ApiKeyAlgorithm = 'ES512',
): Promise<TestKey> {
  const key = await t.get(ApiKeysService).create(merchantAccountId, algorithm);
  return {
    ...key,
    token: (scopes?: string[], ttlSeconds?: number) =>
      signToken({ privateKeyPem: key.privateKeyPem, keyId: key.id, scopes, ttlSeconds }),
  };
}
