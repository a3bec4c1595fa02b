import { createPrivateKey, KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { boolean, ConfigError, durationSeconds, Env, integer, optional, readableFile } from './env';

/** The disclosure ledger (decision 0133): LEDGER_ENABLED, LEDGER_SIGNING_KEY(_FILE), LEDGER_SEAL_INTERVAL, LEDGER_RETENTION. */
export interface LedgerConfig {
  /** Off: records write no ledger entries and nothing is sealed (for a benchmark's reference run). */
  enabled: boolean;
  /** The ECDSA P-256 private key that signs tree heads; null in development/test (one is kept in DATA_DIR). */
  signingKey: KeyObject | null;
  /** LEDGER_PKCS11_KEY_LABEL: the key pair in the vault's PKCS#11 token that signs instead (never leaves it). */
  pkcs11KeyLabel: string | null;
  /** How often new entries are sealed under a signed head. */
  sealIntervalMs: number;
  /** Days ledger entries are kept (PCI DSS 10.5.1 asks for 12 months); heads are kept for ever. */
  retentionDays: number;
}

export function ledgerConfig(env: Env, nodeEnv: string): LedgerConfig {
  const enabled = boolean(env, 'LEDGER_ENABLED', true);
  const signingKey = ledgerSigningKey(env);
  const pkcs11KeyLabel = optional(env, 'LEDGER_PKCS11_KEY_LABEL') ?? null;
  if (pkcs11KeyLabel !== null) {
    if (optional(env, 'VAULT_KEY_PROVIDER')?.toLowerCase() !== 'pkcs11')
      throw new ConfigError(
        'LEDGER_PKCS11_KEY_LABEL',
        "is set but VAULT_KEY_PROVIDER is not pkcs11 (the ledger key is in the vault's token)",
      );
    if (signingKey !== null)
      throw new ConfigError(
        'LEDGER_PKCS11_KEY_LABEL',
        'and LEDGER_SIGNING_KEY(_FILE) are both set: the ledger has one key',
      );
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(pkcs11KeyLabel))
      throw new ConfigError('LEDGER_PKCS11_KEY_LABEL', 'must be 1–64 letters, digits, . _ or -');
  }
  if (enabled && signingKey === null && pkcs11KeyLabel === null && nodeEnv === 'production')
    throw new ConfigError(
      'LEDGER_SIGNING_KEY',
      'is required in production (an ECDSA P-256 private key; or LEDGER_SIGNING_KEY_FILE, or LEDGER_PKCS11_KEY_LABEL)',
    );
  return {
    enabled,
    signingKey,
    pkcs11KeyLabel,
    // Milliseconds allowed below a second so that tests need not wait; a duration like 10s or 1m otherwise.
    sealIntervalMs:
      optional(env, 'LEDGER_SEAL_INTERVAL_MS') !== undefined
        ? integer(env, 'LEDGER_SEAL_INTERVAL_MS', 10_000, 50, 86_400_000)
        : durationSeconds(env, 'LEDGER_SEAL_INTERVAL', 10, 1, 86_400) * 1000,
    retentionDays: integer(env, 'LEDGER_RETENTION', 400, 365, 36_500),
  };
}

function ledgerSigningKey(env: Env): KeyObject | null {
  const file = readableFile(env, 'LEDGER_SIGNING_KEY_FILE');
  const name = file ? 'LEDGER_SIGNING_KEY_FILE' : 'LEDGER_SIGNING_KEY';
  const pem = file ? readFileSync(file, 'utf8') : optional(env, 'LEDGER_SIGNING_KEY');
  if (pem === undefined) return null;
  let key: KeyObject;
  try {
    // A PEM, or (one line, for an .env file) the base64 of the PKCS#8 DER: openssl genpkey … -outform DER | base64 -w0
    key = pem.startsWith('-----BEGIN')
      ? createPrivateKey(pem)
      : createPrivateKey({ key: Buffer.from(pem, 'base64'), format: 'der', type: 'pkcs8' });
  } catch {
    throw new ConfigError(name, 'is not a private key (PEM, or the base64 of its PKCS#8 DER)');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new ConfigError(
      name,
      'must be an ECDSA P-256 key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)',
    );
  return key;
}
