import { createSecretKey, type KeyObject } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { AppConfig } from '../../platform/config/config';
import { readOrCreateDevSecret } from '../../platform/config/dev-secret';
import { decrypt, encrypt } from './crypto/aes-gcm';

/**
 * A master key, wherever it lives: it wraps and unwraps data keys (and bare secrets) itself, so a
 * provider that keeps its keys in hardware never hands them to this process.
 */
export interface MasterKey {
  readonly id: string;
  /** Encrypts `plaintext` (a data key) bound to `aad`. */
  wrap(plaintext: Buffer, aad: string): Buffer;
  /**
   * The plaintext, which the caller zeroes; null when the blob does not authenticate for `aad`.
   * Throws VaultKeyUnavailableError (a 503 problem) when the key store cannot answer.
   */
  unwrap(blob: Buffer, aad: string): Buffer | null;
}

/** A raw AES-256 key from VAULT_MASTER_KEYS (or the development key), used in this process's memory. */
export class EnvMasterKey implements MasterKey {
  /** Made once: a cipher on a KeyObject skips node:crypto's costly checks of a Buffer key (aes-gcm.ts). */
  private readonly material: KeyObject;

  constructor(
    readonly id: string,
    key: Buffer,
  ) {
    this.material = createSecretKey(key);
  }

  wrap(plaintext: Buffer, aad: string): Buffer {
    return encrypt(this.material, plaintext, aad);
  }

  unwrap(blob: Buffer, aad: string): Buffer | null {
    return decrypt(this.material, blob, aad);
  }
}

/** Something the keyring must release when the application closes (a PKCS#11 session). */
export interface KeyStore {
  close(): void;
}

/** The master keys: the first wraps new data keys, all of them unwrap. */
export class VaultKeyring {
  readonly keys: MasterKey[];
  private readonly byId: Map<string, MasterKey>;

  /**
   * @param keys MasterKeys, or raw `{id, key}` pairs taken as env keys.
   * @param source names where the keys are configured, in errors ("VAULT_MASTER_KEYS").
   */
  constructor(
    keys: ReadonlyArray<MasterKey | { id: string; key: Buffer }>,
    readonly source = 'VAULT_MASTER_KEYS',
    private readonly stores: readonly KeyStore[] = [],
  ) {
    if (keys.length === 0) throw new Error('a vault keyring needs at least one master key');
    this.keys = keys.map((k) => ('key' in k ? new EnvMasterKey(k.id, k.key) : k));
    this.byId = new Map(this.keys.map((k) => [k.id, k]));
  }

  get current(): MasterKey {
    return this.keys[0];
  }

  get(id: string): MasterKey | undefined {
    return this.byId.get(id);
  }

  close(): void {
    for (const store of this.stores) store.close();
  }
}

export const VAULT_KEYRING = Symbol('VAULT_KEYRING');

/**
 * VAULT_MASTER_KEYS when set (required in production, where the config refuses to start without it).
 * In development, a generated key kept in DATA_DIR, announced loudly: it protects nothing if the
 * data directory leaks, and losing it loses every stored card. With VAULT_KEY_PROVIDER=pkcs11 see
 * pkcs11-keyring.ts, which this module does not load unless asked (a native addon).
 */
export function envKeyringFromConfig(config: AppConfig): VaultKeyring {
  if (config.vaultMasterKeys.length > 0) return new VaultKeyring(config.vaultMasterKeys);
  const { secret, file, created } = readOrCreateDevSecret(config.dataDir, 'vault-master-key');
  new Logger('Vault').warn(
    `${created ? 'GENERATED' : 'USING'} A DEVELOPMENT VAULT MASTER KEY in ${file} because VAULT_MASTER_KEYS is unset. ` +
      'Cards encrypted with it are lost if the file is lost. Set VAULT_MASTER_KEYS for anything but local development.',
  );
  return new VaultKeyring([{ id: 'dev', key: secret }]);
}
