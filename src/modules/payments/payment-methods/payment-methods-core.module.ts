import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Buyer } from '../buyers/buyer.entity';
import { VaultModule } from '../../vault/vault.module';
import { CheckoutSessionsCoreModule } from '../checkout-sessions/checkout-sessions.module';
import { PaymentMethod } from './payment-method.entity';
import { PaymentMethodsService } from './payment-methods.service';

/**
 * Stored cards without routes: the API's PaymentMethodsModule adds them, and the response rules
 * (forward-responses/, in the worker too) store the cards answers bring back through this.
 */
@Module({
  // Buyer too: the card lists join each card's buyer (PaymentMethodsService.withBuyer).
  imports: [TypeOrmModule.forFeature([PaymentMethod, Buyer]), VaultModule, CheckoutSessionsCoreModule],
  providers: [PaymentMethodsService],
  exports: [PaymentMethodsService],
})
export class PaymentMethodsCoreModule {}
