import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Buyer } from '../buyers/buyer.entity';
import { VaultModule } from '../vault/vault.module';
import { CheckoutSessionsCoreModule } from '../checkout-sessions/checkout-sessions.module';
import { BuyerPaymentMethodsController } from './buyer-payment-methods.controller';
import { PaymentMethod } from './payment-method.entity';
import { PaymentMethodsController } from './payment-methods.controller';
import { NetworkTokensController } from './network-tokens.controller';
import { NetworkTokensService } from './network-tokens.service';
import { PaymentMethodsService } from './payment-methods.service';

@Module({
  // Buyer too: the card lists join each card's buyer (PaymentMethodsService.withBuyer).
  imports: [TypeOrmModule.forFeature([PaymentMethod, Buyer]), VaultModule, CheckoutSessionsCoreModule],
  controllers: [PaymentMethodsController, BuyerPaymentMethodsController, NetworkTokensController],
  providers: [PaymentMethodsService, NetworkTokensService],
  exports: [PaymentMethodsService],
})
export class PaymentMethodsModule {}
