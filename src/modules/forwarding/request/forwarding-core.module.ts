import { Module } from '@nestjs/common';
import { ForwardAuthenticationsCoreModule } from '../../forwarding-setup/authentication-methods/forward-authentications.module';
import { VaultForwardConfigsCoreModule } from '../../forwarding-setup/configs/vault-forward-configs-core.module';
import { VaultCoreModule } from '../../vault/vault.module';
import { CheckoutSessionsCoreModule } from '../../payments/checkout-sessions/checkout-sessions.module';
import { PlaceholderSources } from './placeholder-sources';
import { ForwardExecutor } from './forward-executor';
import { ForwardPlanner } from './forward-planner';
import { ForwardRecordsCoreModule } from '../records/forward-records.module';
import { LedgerCoreModule } from '../ledger/ledger.module';
import { SendingCoreModule } from '../sending/sending.module';
import { ForwardingService } from './forwarding.service';
import { ForwardResponsesCoreModule } from '../answers/forward-responses.module';
import { NetworkTokensCoreModule } from '../../payments/network-tokens/network-tokens.module';
import { DisclosureBudgetsCoreModule } from '../budgets/disclosure-budgets.module';

/**
 * Sending forwards, without HTTP routes, the auth guard or pagination: the planner, the executor and
 * what they need. The API (through ForwardEntryModule) and the worker both import it, so a process
 * has one DownstreamClient (one set of connection pools) and one record writer.
 */
@Module({
  imports: [
    VaultCoreModule,
    CheckoutSessionsCoreModule,
    VaultForwardConfigsCoreModule,
    ForwardAuthenticationsCoreModule,
    ForwardResponsesCoreModule,
    NetworkTokensCoreModule,
    SendingCoreModule,
    ForwardRecordsCoreModule,
    LedgerCoreModule,
    DisclosureBudgetsCoreModule,
  ],
  providers: [PlaceholderSources, ForwardPlanner, ForwardExecutor, ForwardingService],
  exports: [ForwardPlanner, ForwardExecutor, ForwardingService, SendingCoreModule, ForwardRecordsCoreModule],
})
export class ForwardingCoreModule {}
