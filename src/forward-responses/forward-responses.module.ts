import { Module } from '@nestjs/common';
import { PaymentMethodsCoreModule } from '../payment-methods/payment-methods-core.module';
import { ResponseFilter } from './response-filter';

/** The response side of a forward (issue 27): answers put through their config's response rules. */
@Module({
  imports: [PaymentMethodsCoreModule],
  providers: [ResponseFilter],
  exports: [ResponseFilter],
})
export class ForwardResponsesModule {}
