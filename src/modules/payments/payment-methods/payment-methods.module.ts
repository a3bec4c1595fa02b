import { Module } from '@nestjs/common';
import { BuyerPaymentMethodsController } from './buyer-payment-methods.controller';
import { PaymentMethodsController } from './payment-methods.controller';
import { VaultCoreModule } from '../../vault/vault.module';
import { NetworkTokensController } from './network-tokens.controller';
import { NetworkTokensRepository } from './network-tokens.repository';
import { NetworkTokensService } from './network-tokens.service';
import { PaymentMethodsCoreModule } from './payment-methods-core.module';

@Module({
  imports: [PaymentMethodsCoreModule, VaultCoreModule],
  controllers: [PaymentMethodsController, BuyerPaymentMethodsController, NetworkTokensController],
  providers: [NetworkTokensService, NetworkTokensRepository],
  exports: [PaymentMethodsCoreModule],
})
export class PaymentMethodsModule {}
