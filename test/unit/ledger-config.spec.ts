import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/platform/config/config';
import { TEST_LEDGER_KEY } from '../support/ledger-key';

describe('LEDGER_* settings (decision 0133)', () => {
  const production = {
    NODE_ENV: 'production',
    VAULT_MASTER_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
    CURSOR_SECRET: 'a-cursor-secret-of-at-least-thirty-two-characters',
  };

  it('defaults: on, sealed every 10 s, kept 400 days, no key outside production', () => {
    expect(loadConfig({}).ledger).toEqual({
      enabled: true,
      signingKey: null,
      pkcs11KeyLabel: null,
      sealIntervalMs: 10_000,
      retentionDays: 400,
    });
    expect(loadConfig({ LEDGER_SEAL_INTERVAL: '1m', LEDGER_RETENTION: '730' }).ledger).toMatchObject({
      sealIntervalMs: 60_000,
      retentionDays: 730,
    });
  });

  it('requires a key in production, unless the ledger is off', () => {
    expect(() => loadConfig(production)).toThrow('LEDGER_SIGNING_KEY: is required in production');
    expect(loadConfig({ ...production, LEDGER_ENABLED: 'false' }).ledger.enabled).toBe(false);
  });

  it('takes the key as a PEM, a PEM file, or one line of base64 DER; refuses another curve and a short retention', () => {
    const pem = loadConfig({ ...production, LEDGER_SIGNING_KEY: TEST_LEDGER_KEY }).ledger.signingKey!;
    expect(pem.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const der = createPrivateKey(TEST_LEDGER_KEY).export({ type: 'pkcs8', format: 'der' }).toString('base64');
    expect(loadConfig({ LEDGER_SIGNING_KEY: der }).ledger.signingKey!.equals(pem)).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'vf-ledger-key-'));
    try {
      writeFileSync(join(dir, 'ledger.pem'), TEST_LEDGER_KEY);
      expect(loadConfig({ LEDGER_SIGNING_KEY_FILE: join(dir, 'ledger.pem') }).ledger.signingKey!.equals(pem)).toBe(
        true,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const other = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    expect(() => loadConfig({ LEDGER_SIGNING_KEY: other.toString() })).toThrow('must be an ECDSA P-256 key');
    expect(() => loadConfig({ LEDGER_SIGNING_KEY: 'not a key' })).toThrow('is not a private key');
    expect(() => loadConfig({ LEDGER_PKCS11_KEY_LABEL: 'ledger-1' })).toThrow('VAULT_KEY_PROVIDER is not pkcs11');
    expect(() => loadConfig({ LEDGER_RETENTION: '30' })).toThrow('LEDGER_RETENTION: must be between 365 and 36500');
  });
});
