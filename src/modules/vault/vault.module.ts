import { Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '../../platform/config/config';
import { APP_CONFIG } from '../../platform/config/config.module';
import { CardVault } from './card-vault.service';
import { KeyRotationService } from './key-rotation.service';
import { Metrics } from '../../platform/metrics/metrics.service';
import { envKeyringFromConfig, VAULT_KEYRING, VaultKeyring } from './keyring';
// Registers the vault's problem types (GET /errors/...) even when no PKCS#11 keyring is loaded.
import './vault.errors';
import { PaymentMethodResolver } from './payment-method-resolver.service';
import { SecretSealer } from './secret-sealer';
import { MerchantKeysRepository } from './merchant-keys.repository';
import { SealedRowsRepository } from './sealed-rows.repository';
import { SealedCardsRepository } from './sealed-cards.repository';

/**
 * Encryption of card secrets, their resolution into placeholder values, the generic SecretSealer,
 * and key rotation of every sealed table.
 */
@Module({
  providers: [
    { provide: VAULT_KEYRING, inject: [APP_CONFIG, Metrics], useFactory: keyringFromConfig },
    CardVault,
    PaymentMethodResolver,
    KeyRotationService,
    SecretSealer,
    MerchantKeysRepository,
    SealedRowsRepository,
    SealedCardsRepository,
  ],
  exports: [CardVault, PaymentMethodResolver, KeyRotationService, SecretSealer],
})
export class VaultCoreModule implements OnApplicationShutdown {
  constructor(@Inject(VAULT_KEYRING) private readonly keyring: VaultKeyring) {}

  onApplicationShutdown(): void {
    this.keyring.close();
  }
}

/** pkcs11-keyring.ts loads a native addon: only when asked for. */
async function keyringFromConfig(config: AppConfig, metrics: Metrics): Promise<VaultKeyring> {
  if (config.vaultKeyProvider === 'env') return envKeyringFromConfig(config);
  const { pkcs11KeyringFromConfig } = await import('./pkcs11-keyring');
  const audit = new Logger('VaultKeyUse');
  return pkcs11KeyringFromConfig(config, {
    tokenCall: (operation, seconds, ok) => metrics.keyStoreCall(operation, seconds, ok),
    unwrapLookup: (cached) => metrics.dataKeyUnwrapped(cached),
    // The key-use audit (docs/vault.md): one line per unwrap by the token, never key bytes, blobs or the PIN.
    unwrapped: ({ keyLabel, aad, seconds, outcome }) => {
      const { purpose, owners } = binding(aad);
      const line = {
        msg: 'data key unwrapped by the key store',
        provider: 'pkcs11',
        token_label: config.vaultPkcs11!.tokenLabel,
        key_label: keyLabel,
        purpose,
        owners,
        duration_ms: Math.round(seconds * 1e6) / 1e3,
        outcome,
      };
      if (outcome === 'ok') audit.log(line);
      else audit.warn(line);
    },
  });
}

/**
 * What a wrapped data key is bound to, from the AAD its master key sees: `wrap`, the key id, then the
 * record's AAD (envelope.ts), which is `purpose`, `v1`, owner ids (boundAad in secret-sealer.ts).
 */
function binding(aad: string): { purpose: string; owners: string[] } {
  const parts = aad.split('\n');
  const record = parts[0] === 'wrap' ? parts.slice(2) : parts;
  const [purpose = '', ...rest] = record;
  return { purpose, owners: rest[0] === 'v1' ? rest.slice(1) : rest };
}
