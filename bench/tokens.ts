/**
 * npm run bench:tokens — what authenticating one request costs: ES512 vs ES256 signature checks, and
 * a reused token served from the TokenVerifier's cache. CPU only: the key lookup is answered from
 * memory (the real ApiKeysService would hit PostgreSQL once per key per minute).
 */
import 'reflect-metadata';
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import { ApiKey, ApiKeyAlgorithm } from '../src/modules/merchants/auth/api-key.entity';
import { apiKeyId, ApiKeysService } from '../src/modules/merchants/auth/api-keys.service';
import { signToken } from '../src/modules/merchants/auth/token-signer';
import { TokenVerifier } from '../src/modules/merchants/auth/token-verifier.service';
import { loadConfig } from '../src/platform/config/config';
import { SharedCaches } from '../src/platform/redis/shared-cache';
import { SYSTEM_CLOCK } from '../src/platform/time/clock';
import { interleaved, table } from './support';
import { Metrics } from '../src/platform/metrics/metrics.service';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2000);

async function key(algorithm: ApiKeyAlgorithm) {
  const { publicKey, privateKey } = await generateKeyPair(algorithm, { extractable: true });
  const jwk = await exportJWK(publicKey);
  const id = await apiKeyId(jwk);
  const row = Object.assign(new ApiKey(), {
    id,
    merchantAccountId: 'bench',
    algorithm,
    publicKey: jwk,
    revokedAt: null,
  });
  return { id, row, privateKeyPem: await exportPKCS8(privateKey) };
}

async function main(): Promise<void> {
  const es512 = await key('ES512');
  const es256 = await key('ES256');
  const rows = new Map([es512, es256].map((k) => [k.id, k.row]));
  const keys = { findActive: (id: string) => Promise.resolve(rows.get(id) ?? null) } as unknown as ApiKeysService;
  const uncached = new TokenVerifier(
    keys,
    loadConfig({ TOKEN_CACHE_SIZE: '0' }),
    new SharedCaches(null, null, new Metrics()),
    SYSTEM_CLOCK,
  );
  const cached = new TokenVerifier(keys, loadConfig({}), new SharedCaches(null, null, new Metrics()), SYSTEM_CLOCK);

  const t512 = await signToken({ privateKeyPem: es512.privateKeyPem, keyId: es512.id });
  const t256 = await signToken({ privateKeyPem: es256.privateKeyPem, keyId: es256.id });
  const results = await interleaved(
    {
      'ES512 verify (no cache)': () => uncached.verify(t512),
      'ES256 verify (no cache)': () => uncached.verify(t256),
      'ES512 reused token (cache hit)': () => cached.verify(t512),
    },
    ROUNDS,
    50,
  );
  const m = (k: string) => results[k].median;
  console.log(`\n${ROUNDS} interleaved rounds after warm-up\n`);
  console.log(table(results));
  console.log(
    `\nES512 / ES256 verify (median): ${(m('ES512 verify (no cache)') / m('ES256 verify (no cache)')).toFixed(1)}×`,
  );
  console.log(
    `ES512 verify / cache hit (median): ${(m('ES512 verify (no cache)') / m('ES512 reused token (cache hit)')).toFixed(0)}×`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
