import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BuyersCoreModule } from '../buyers/buyers.module';
import { VaultCoreModule } from '../../vault/vault.module';
import { CheckoutSessionsCoreModule } from '../checkout-sessions/checkout-sessions.module';
import { PaymentMethod } from './payment-method.entity';
import { PaymentMethodsRepository } from './payment-methods.repository';
import { PaymentMethodsService } from './payment-methods.service';

/**
 * Stored cards without routes: the API's PaymentMethodsModule adds them, and the response rules
 * (forward-responses/, in the worker too) store the cards answers bring back through this.
 */
@Module({
  // The buyers' repository: cards name their buyer, and the card lists join it (Buyer registered there).
  imports: [TypeOrmModule.forFeature([PaymentMethod]), BuyersCoreModule, VaultCoreModule, CheckoutSessionsCoreModule],
  providers: [PaymentMethodsService, PaymentMethodsRepository],
  exports: [PaymentMethodsService],
})
export class PaymentMethodsCoreModule {}
