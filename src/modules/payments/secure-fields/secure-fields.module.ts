import { Module } from '@nestjs/common';
import { MerchantAccountsModule } from '../../merchants/accounts/merchant-accounts.module';
import { CheckoutSessionsModule } from '../checkout-sessions/checkout-sessions.module';
import { SecureFieldsHttpHandler } from './secure-fields-http-handler';

/**
 * The secure-fields origin (decision 0140): SecureFieldsHttpHandler answers its requests ahead of fastify
 * (createApiApp), with the checkout sessions' own service for the card.
 */
@Module({
  imports: [CheckoutSessionsModule, MerchantAccountsModule],
  providers: [SecureFieldsHttpHandler],
  exports: [SecureFieldsHttpHandler],
})
export class SecureFieldsModule {}
