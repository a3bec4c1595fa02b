import { readFileSync } from 'node:fs';
import { ConfigError, durationSeconds, Env, integer, optional, readableFile } from './env';

/** The vault's master keys: VAULT_KEY_PROVIDER, VAULT_MASTER_KEYS and the VAULT_PKCS11_* settings. */
export interface VaultMasterKey {
  id: string;
  key: Buffer;
}

export const VAULT_KEY_PROVIDERS = ['env', 'pkcs11'] as const;
export type VaultKeyProvider = (typeof VAULT_KEY_PROVIDERS)[number];

/** Where the master keys live when they live in a PKCS#11 token (an HSM; SoftHSM2 in tests). */
export interface VaultPkcs11Config {
  /** Path of the PKCS#11 library (the .so). */
  module: string;
  tokenLabel: string;
  /** The user PIN, from VAULT_PKCS11_PIN_FILE or VAULT_PKCS11_PIN; never logged. */
  pin: string;
  /** The first wraps new data keys, all unwrap; each is also the master key id stored in the rows. */
  keyLabels: string[];
  /** Unwrapped data keys kept in memory so a forward needs no HSM round trip; 0 = no cache. */
  dataKeyCacheSize: number;
  dataKeyCacheTtlMs: number;
}

const MASTER_KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * `VAULT_MASTER_KEYS` holds `id:base64key` pairs, either as a comma list or as a JSON array of strings
 * or `{id, key}` objects. The first key is the current one (used to wrap new data keys); the others
 * stay only to unwrap older records until they are rotated.
 */
export function parseVaultMasterKeys(raw: string | undefined): VaultMasterKey[] {
  const name = 'VAULT_MASTER_KEYS';
  if (raw === undefined) return [];
  let entries: Array<{ id: string; key: string }>;
  if (raw.startsWith('[') || raw.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw new ConfigError(name, 'looks like JSON but does not parse');
    }
    const list = Array.isArray(json) ? json : [json];
    entries = (list as unknown[]).map((item, index) => {
      if (typeof item === 'string') return splitPair(item, index);
      const entry = item as { id?: unknown; key?: unknown } | null;
      if (entry && typeof entry === 'object' && typeof entry.id === 'string' && typeof entry.key === 'string') {
        return { id: entry.id, key: entry.key };
      }
      throw new ConfigError(name, `entry ${index + 1} must be "id:base64key" or {"id","key"}`);
    });
  } else {
    entries = raw.split(',').map((pair, index) => splitPair(pair.trim(), index));
  }
  if (entries.length === 0) throw new ConfigError(name, 'lists no key');
  const seen = new Set<string>();
  return entries.map(({ id, key }, index) => {
    if (!MASTER_KEY_ID.test(id))
      throw new ConfigError(name, `entry ${index + 1} has an invalid id (letters, digits, . _ -)`);
    if (seen.has(id)) throw new ConfigError(name, `key id "${id}" appears twice`);
    seen.add(id);
    const bytes = Buffer.from(key, 'base64');
    if (bytes.length !== 32 || bytes.toString('base64').replace(/=+$/, '') !== key.replace(/=+$/, '')) {
      throw new ConfigError(name, `key "${id}" must be 32 bytes of standard base64 (openssl rand -base64 32)`);
    }
    return { id, key: bytes };
  });

  function splitPair(pair: string, index: number): { id: string; key: string } {
    const at = pair.indexOf(':');
    if (at <= 0) throw new ConfigError(name, `entry ${index + 1} must be "id:base64key"`);
    return { id: pair.slice(0, at), key: pair.slice(at + 1) };
  }
}

function vaultMasterKeys(env: Env, nodeEnv: string, provider: VaultKeyProvider): VaultMasterKey[] {
  const keys = parseVaultMasterKeys(optional(env, 'VAULT_MASTER_KEYS'));
  if (keys.length === 0 && nodeEnv === 'production' && provider === 'env') {
    throw new ConfigError(
      'VAULT_MASTER_KEYS',
      'is required in production: "id:base64key" (openssl rand -base64 32), the first one current',
    );
  }
  return keys;
}

function vaultKeyProvider(env: Env): VaultKeyProvider {
  const raw = optional(env, 'VAULT_KEY_PROVIDER')?.toLowerCase() ?? 'env';
  if (!(VAULT_KEY_PROVIDERS as readonly string[]).includes(raw))
    throw new ConfigError('VAULT_KEY_PROVIDER', `must be one of ${VAULT_KEY_PROVIDERS.join(', ')}, got "${raw}"`);
  return raw as VaultKeyProvider;
}

const PKCS11_VARIABLES = [
  'VAULT_PKCS11_MODULE',
  'VAULT_PKCS11_TOKEN_LABEL',
  'VAULT_PKCS11_PIN_FILE',
  'VAULT_PKCS11_PIN',
  'VAULT_PKCS11_KEY_LABELS',
];

/**
 * The PKCS#11 settings, all checked here so that a typo stops the start-up with the variable's name
 * rather than surfacing as an HSM error at the first card. The CLI's `vault key create` reads the
 * same ones (`requireKeyLabels` false: it may make the first key).
 */
export function vaultPkcs11(
  env: Env,
  masterKeys: readonly VaultMasterKey[],
  requireKeyLabels = true,
): VaultPkcs11Config {
  const module = readableFile(env, 'VAULT_PKCS11_MODULE');
  if (module === null)
    throw new ConfigError(
      'VAULT_PKCS11_MODULE',
      'is required with VAULT_KEY_PROVIDER=pkcs11 (the path of the PKCS#11 library)',
    );
  const tokenLabel = optional(env, 'VAULT_PKCS11_TOKEN_LABEL');
  if (tokenLabel === undefined)
    throw new ConfigError('VAULT_PKCS11_TOKEN_LABEL', 'is required with VAULT_KEY_PROVIDER=pkcs11');
  if (Buffer.byteLength(tokenLabel) > 32)
    throw new ConfigError('VAULT_PKCS11_TOKEN_LABEL', 'is longer than a token label can be (32 bytes)');
  const labels = (optional(env, 'VAULT_PKCS11_KEY_LABELS') ?? '')
    .split(',')
    .map((l) => l.trim())
    .filter(Boolean);
  if (labels.length === 0 && requireKeyLabels)
    throw new ConfigError(
      'VAULT_PKCS11_KEY_LABELS',
      'is required with VAULT_KEY_PROVIDER=pkcs11: key labels, comma-separated, the first current ' +
        '(npm run cli -- vault key create --label NAME)',
    );
  const seen = new Set(masterKeys.map((k) => k.id));
  for (const label of labels) {
    if (!MASTER_KEY_ID.test(label))
      throw new ConfigError(
        'VAULT_PKCS11_KEY_LABELS',
        `"${label}" is not a valid key label (1–64 letters, digits, . _ -)`,
      );
    if (seen.has(label))
      throw new ConfigError('VAULT_PKCS11_KEY_LABELS', `"${label}" appears twice (or also in VAULT_MASTER_KEYS)`);
    seen.add(label);
  }
  return {
    module,
    tokenLabel,
    pin: pkcs11Pin(env),
    keyLabels: labels,
    dataKeyCacheSize: integer(env, 'VAULT_DATA_KEY_CACHE_SIZE', 10_000, 0, 1_000_000),
    dataKeyCacheTtlMs: durationSeconds(env, 'VAULT_DATA_KEY_CACHE_TTL', 300, 0, 86_400) * 1000,
  };
}

function pkcs11Pin(env: Env): string {
  const file = readableFile(env, 'VAULT_PKCS11_PIN_FILE');
  const direct = optional(env, 'VAULT_PKCS11_PIN');
  if (file !== null && direct !== undefined)
    throw new ConfigError('VAULT_PKCS11_PIN', 'is set as well as VAULT_PKCS11_PIN_FILE; set only one');
  if (file === null && direct === undefined)
    throw new ConfigError('VAULT_PKCS11_PIN_FILE', 'or VAULT_PKCS11_PIN is required with VAULT_KEY_PROVIDER=pkcs11');
  if (direct !== undefined) return direct;
  let pin: string;
  try {
    pin = readFileSync(file!, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(
      'VAULT_PKCS11_PIN_FILE',
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  // Never echoed: only its shape is reported.
  if (pin === '' || pin.includes('\n')) throw new ConfigError('VAULT_PKCS11_PIN_FILE', 'must hold the PIN on one line');
  return pin;
}

export interface VaultKeysConfig {
  vaultKeyProvider: VaultKeyProvider;
  vaultMasterKeys: VaultMasterKey[];
  vaultPkcs11: VaultPkcs11Config | null;
}

export function vaultKeys(env: Env, nodeEnv: string): VaultKeysConfig {
  const provider = vaultKeyProvider(env);
  const masterKeys = vaultMasterKeys(env, nodeEnv, provider);
  if (provider === 'env') {
    const stray = PKCS11_VARIABLES.find((name) => optional(env, name) !== undefined);
    // A PKCS#11 setup without the switch would silently keep using (or generating) raw keys.
    if (stray) throw new ConfigError(stray, 'is set but VAULT_KEY_PROVIDER is not pkcs11');
    return { vaultKeyProvider: provider, vaultMasterKeys: masterKeys, vaultPkcs11: null };
  }
  return { vaultKeyProvider: provider, vaultMasterKeys: masterKeys, vaultPkcs11: vaultPkcs11(env, masterKeys) };
}
