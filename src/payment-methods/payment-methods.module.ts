import { Module } from '@nestjs/common';
import { BuyerPaymentMethodsController } from './buyer-payment-methods.controller';
import { PaymentMethodsController } from './payment-methods.controller';
import { PaymentMethodsCoreModule } from './payment-methods-core.module';

@Module({
  imports: [PaymentMethodsCoreModule],
  controllers: [PaymentMethodsController, BuyerPaymentMethodsController],
  exports: [PaymentMethodsCoreModule],
})
export class PaymentMethodsModule {}
