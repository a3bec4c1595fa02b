import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { CardVault } from './card-vault.service';
import { KeyRotationService } from './key-rotation.service';
import { Metrics } from '../metrics/metrics.service';
import { envKeyringFromConfig, VAULT_KEYRING, VaultKeyring } from './keyring';
// Registers the vault's problem types (GET /errors/...) even when no PKCS#11 keyring is loaded.
import './vault.errors';
import { PaymentMethodResolver } from './payment-method-resolver.service';
import { SecretSealer } from './secret-sealer';

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
  ],
  exports: [CardVault, PaymentMethodResolver, KeyRotationService, SecretSealer],
})
export class VaultModule implements OnApplicationShutdown {
  constructor(@Inject(VAULT_KEYRING) private readonly keyring: VaultKeyring) {}

  onApplicationShutdown(): void {
    this.keyring.close();
  }
}

/** pkcs11-keyring.ts loads a native addon: only when asked for. */
async function keyringFromConfig(config: AppConfig, metrics: Metrics): Promise<VaultKeyring> {
  if (config.vaultKeyProvider === 'env') return envKeyringFromConfig(config);
  const { pkcs11KeyringFromConfig } = await import('./pkcs11-keyring');
  return pkcs11KeyringFromConfig(config, {
    tokenCall: (operation, seconds, ok) => metrics.keyStoreCall(operation, seconds, ok),
    unwrapLookup: (cached) => metrics.dataKeyUnwrapped(cached),
  });
}
