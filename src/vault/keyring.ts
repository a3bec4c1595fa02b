import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { readOrCreateDevSecret } from '../config/dev-secret';

export interface MasterKey {
  id: string;
  key: Buffer;
}

/** The master keys from VAULT_MASTER_KEYS: the first wraps new data keys, all of them unwrap. */
export class VaultKeyring {
  private readonly byId: Map<string, MasterKey>;

  constructor(readonly keys: MasterKey[]) {
    if (keys.length === 0) throw new Error('a vault keyring needs at least one master key');
    this.byId = new Map(keys.map((k) => [k.id, k]));
  }

  get current(): MasterKey {
    return this.keys[0];
  }

  get(id: string): MasterKey | undefined {
    return this.byId.get(id);
  }
}

export const VAULT_KEYRING = Symbol('VAULT_KEYRING');

/**
 * VAULT_MASTER_KEYS when set (required in production, where the config refuses to start without it).
 * In development, a generated key kept in DATA_DIR, announced loudly: it protects nothing if the
 * data directory leaks, and losing it loses every stored card.
 */
export function keyringFromConfig(config: AppConfig): VaultKeyring {
  if (config.vaultMasterKeys.length > 0) return new VaultKeyring(config.vaultMasterKeys);
  const { secret, file, created } = readOrCreateDevSecret(config.dataDir, 'vault-master-key');
  new Logger('Vault').warn(
    `${created ? 'GENERATED' : 'USING'} A DEVELOPMENT VAULT MASTER KEY in ${file} because VAULT_MASTER_KEYS is unset. ` +
      'Cards encrypted with it are lost if the file is lost. Set VAULT_MASTER_KEYS for anything but local development.',
  );
  return new VaultKeyring([{ id: 'dev', key: secret }]);
}
