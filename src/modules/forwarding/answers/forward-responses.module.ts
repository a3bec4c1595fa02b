import { Module } from '@nestjs/common';
import { PaymentMethodsCoreModule } from '../../payments/payment-methods/payment-methods-core.module';
import { MleAnswers } from './mle-answers';
import { ResponseFilter } from './response-filter';

/** The response side of a forward: encrypted answers opened, answers put through their config's response rules. */
@Module({
  imports: [PaymentMethodsCoreModule],
  providers: [ResponseFilter, MleAnswers],
  exports: [ResponseFilter, MleAnswers],
})
export class ForwardResponsesCoreModule {}
