import { Module } from '@nestjs/common';
import { ForwardResponsesCoreModule } from '../../forwarding/answers/forward-responses.module';
import { SendingCoreModule } from '../../forwarding/sending/sending.module';
import { WebhookSignerCoreModule } from '../../merchants/webhook-secrets/webhook-secrets.module';
import { CheckoutSessionsModule } from '../../payments/checkout-sessions/checkout-sessions.module';
import { PaymentMethodsCoreModule } from '../../payments/payment-methods/payment-methods-core.module';
import { InboundRecordsModule } from '../records/inbound-records.module';
import { InboundRoutesModule } from '../routes/inbound-routes.module';
import { CallerVerification } from './caller-verification';
import { InboundCards } from './inbound-cards';
import { InboundHttpHandler } from './inbound-http-handler';
import { InboundMetrics } from './inbound-metrics';
import { InboundRouteWindowsRepository } from './inbound-route-windows.repository';
import { InboundSender } from './inbound-sender';

/**
 * The API's inbound routes (decision 0153): their routes and records (the modules imported, with their
 * controllers), and the entry /vault-inbound/{route_id}/… that InboundHttpHandler answers ahead of fastify.
 */
@Module({
  imports: [
    InboundRoutesModule,
    InboundRecordsModule,
    SendingCoreModule,
    ForwardResponsesCoreModule,
    WebhookSignerCoreModule,
    PaymentMethodsCoreModule,
    CheckoutSessionsModule,
  ],
  providers: [
    InboundHttpHandler,
    CallerVerification,
    InboundCards,
    InboundSender,
    InboundMetrics,
    InboundRouteWindowsRepository,
  ],
  exports: [InboundHttpHandler],
})
export class InboundModule {}
