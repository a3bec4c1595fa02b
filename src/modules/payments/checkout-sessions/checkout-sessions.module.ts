import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultCoreModule } from '../../vault/vault.module';
import { MerchantAccountsModule } from '../../merchants/accounts/merchant-accounts.module';
import { CheckoutSession } from './checkout-session.entity';
import { CheckoutSessionCards } from './checkout-session-cards';
import { CheckoutSessionPurge } from './checkout-session-purge';
import { CheckoutSessionsController } from './checkout-sessions.controller';
import { CheckoutSessionsRepository } from './checkout-sessions.repository';
import { CheckoutSessionsService } from './checkout-sessions.service';

/** The sessions' card loader, without routes: forwarding (API and worker) and payment methods use it. */
@Module({
  imports: [TypeOrmModule.forFeature([CheckoutSession]), VaultCoreModule],
  providers: [CheckoutSessionCards, CheckoutSessionsRepository],
  exports: [CheckoutSessionCards, CheckoutSessionsRepository],
})
export class CheckoutSessionsCoreModule {}

/** /checkout/sessions routes and the periodic purge of expired sessions. */
@Module({
  imports: [VaultCoreModule, CheckoutSessionsCoreModule, MerchantAccountsModule],
  controllers: [CheckoutSessionsController],
  providers: [CheckoutSessionsService, CheckoutSessionPurge],
  exports: [CheckoutSessionsService],
})
export class CheckoutSessionsModule {}
