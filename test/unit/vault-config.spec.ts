import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/platform/config/config';
import { TEST_LEDGER_KEY } from '../support/ledger-key';

const key = (byte: number) => Buffer.alloc(32, byte).toString('base64');

describe('VAULT_KEY_PROVIDER and the VAULT_PKCS11_* settings', () => {
  let dir: string;
  let module: string;
  let pinFile: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'vf-vault-config-'));
    // Any existing file passes the config's check; loading the library is the keyring's job.
    module = join(dir, 'libtoken.so');
    writeFileSync(module, '');
    pinFile = join(dir, 'pin');
    writeFileSync(pinFile, '98765432\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const pkcs11 = (extra: Record<string, string> = {}) => ({
    VAULT_KEY_PROVIDER: 'pkcs11',
    VAULT_PKCS11_MODULE: module,
    VAULT_PKCS11_TOKEN_LABEL: 'vault',
    VAULT_PKCS11_PIN_FILE: pinFile,
    VAULT_PKCS11_KEY_LABELS: 'hsm-2, hsm-1',
    ...extra,
  });

  it('defaults to env, with no PKCS#11 settings', () => {
    const config = loadConfig({});
    expect(config.vaultKeyProvider).toBe('env');
    expect(config.vaultPkcs11).toBeNull();
  });

  it('reads the PKCS#11 settings: the PIN from its file, labels in order, the cache defaults', () => {
    const config = loadConfig(
      pkcs11({ NODE_ENV: 'production', CURSOR_SECRET: 'x'.repeat(32), LEDGER_SIGNING_KEY: TEST_LEDGER_KEY }),
    );
    expect(config.vaultKeyProvider).toBe('pkcs11');
    // Production needs no VAULT_MASTER_KEYS when the keys are in a token.
    expect(config.vaultMasterKeys).toEqual([]);
    expect(config.vaultPkcs11).toEqual({
      module,
      tokenLabel: 'vault',
      pin: '98765432',
      keyLabels: ['hsm-2', 'hsm-1'],
      dataKeyCacheSize: 10_000,
      dataKeyCacheTtlMs: 300_000,
    });
    const direct = loadConfig(
      pkcs11({
        VAULT_PKCS11_PIN_FILE: '',
        VAULT_PKCS11_PIN: '1234',
        VAULT_DATA_KEY_CACHE_SIZE: '0',
        VAULT_DATA_KEY_CACHE_TTL: '2m',
      }),
    ).vaultPkcs11;
    expect(direct).toMatchObject({ pin: '1234', dataKeyCacheSize: 0, dataKeyCacheTtlMs: 120_000 });
  });

  it.each([
    [{ VAULT_KEY_PROVIDER: 'kms' }, 'VAULT_KEY_PROVIDER: must be one of env, pkcs11, got "kms"'],
    [{ VAULT_PKCS11_MODULE: '' }, 'VAULT_PKCS11_MODULE: is required with VAULT_KEY_PROVIDER=pkcs11'],
    [{ VAULT_PKCS11_MODULE: '/nonexistent/lib.so' }, 'VAULT_PKCS11_MODULE: no file at /nonexistent/lib.so'],
    [{ VAULT_PKCS11_TOKEN_LABEL: '' }, 'VAULT_PKCS11_TOKEN_LABEL: is required'],
    [{ VAULT_PKCS11_TOKEN_LABEL: 'x'.repeat(33) }, 'VAULT_PKCS11_TOKEN_LABEL: is longer than a token label can be'],
    [{ VAULT_PKCS11_PIN_FILE: '' }, 'VAULT_PKCS11_PIN_FILE: or VAULT_PKCS11_PIN is required'],
    [{ VAULT_PKCS11_PIN: '1234' }, 'VAULT_PKCS11_PIN: is set as well as VAULT_PKCS11_PIN_FILE'],
    [{ VAULT_PKCS11_KEY_LABELS: ' , ' }, 'VAULT_PKCS11_KEY_LABELS: is required'],
    [{ VAULT_PKCS11_KEY_LABELS: 'a b' }, 'VAULT_PKCS11_KEY_LABELS: "a b" is not a valid key label'],
    [{ VAULT_PKCS11_KEY_LABELS: 'k,k' }, 'VAULT_PKCS11_KEY_LABELS: "k" appears twice'],
    [{ VAULT_MASTER_KEYS: `k:${key(1)}`, VAULT_PKCS11_KEY_LABELS: 'k' }, 'VAULT_PKCS11_KEY_LABELS: "k" appears twice'],
    [{ VAULT_DATA_KEY_CACHE_SIZE: '-1' }, 'VAULT_DATA_KEY_CACHE_SIZE: must be a whole number'],
    [{ VAULT_DATA_KEY_CACHE_TTL: '2w' }, 'VAULT_DATA_KEY_CACHE_TTL: must be a duration'],
  ])('refuses %p with a message naming the variable', (extra, message) => {
    expect(() => loadConfig(pkcs11(extra))).toThrow(ConfigError);
    expect(() => loadConfig(pkcs11(extra))).toThrow(message);
  });

  it('refuses PKCS#11 settings without VAULT_KEY_PROVIDER=pkcs11, which would silently keep raw keys', () => {
    expect(() => loadConfig({ VAULT_PKCS11_KEY_LABELS: 'hsm-1' })).toThrow(
      'VAULT_PKCS11_KEY_LABELS: is set but VAULT_KEY_PROVIDER is not pkcs11',
    );
  });

  it('never echoes the PIN', () => {
    const bad = join(dir, 'pin-two-lines');
    writeFileSync(bad, 'secret-pin-1\nsecret-pin-2\n');
    expect(() => loadConfig(pkcs11({ VAULT_PKCS11_PIN_FILE: bad }))).toThrow(
      'VAULT_PKCS11_PIN_FILE: must hold the PIN on one line',
    );
    expect(() => loadConfig(pkcs11({ VAULT_PKCS11_PIN_FILE: bad }))).not.toThrow(/secret-pin/);
  });
});
