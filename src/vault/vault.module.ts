import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { CardVault } from './card-vault.service';
import { KeyRotationService } from './key-rotation.service';
import { keyringFromConfig, VAULT_KEYRING } from './keyring';
import { PaymentMethodResolver } from './payment-method-resolver.service';
import { SecretSealer } from './secret-sealer';

/**
 * Encryption of card secrets, their resolution into placeholder values, the generic SecretSealer,
 * and key rotation of every sealed table.
 */
@Module({
  providers: [
    { provide: VAULT_KEYRING, inject: [APP_CONFIG], useFactory: (config: AppConfig) => keyringFromConfig(config) },
    CardVault,
    PaymentMethodResolver,
    KeyRotationService,
    SecretSealer,
  ],
  exports: [CardVault, PaymentMethodResolver, KeyRotationService, SecretSealer],
})
export class VaultModule {}
