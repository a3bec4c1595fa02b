import { Module } from '@nestjs/common';
import { ForwardAuthenticationsCoreModule } from '../../forwarding-setup/authentication-methods/forward-authentications.module';
import { VaultForwardConfigsCoreModule } from '../../forwarding-setup/configs/vault-forward-configs-core.module';
import { VaultModule } from '../../vault/vault.module';
import { CheckoutSessionsCoreModule } from '../../payments/checkout-sessions/checkout-sessions.module';
import { PlaceholderSources } from './placeholder-sources';
import { ForwardExecutor } from './forward-executor';
import { ForwardPlanner } from './forward-planner';
import { ForwardRecordsCoreModule } from '../records/forward-records.module';
import { SendingModule } from '../sending/sending.module';
import { ForwardingService } from './forwarding.service';
import { ForwardResponsesModule } from '../answers/forward-responses.module';
import { NetworkTokensModule } from '../../payments/network-tokens/network-tokens.module';

/**
 * Sending forwards, without HTTP routes, the auth guard or pagination: the planner, the executor and
 * what they need. The API (through ForwardEntryModule) and the worker both import it, so a process
 * has one DownstreamClient (one set of connection pools) and one record writer.
 */
@Module({
  imports: [
    VaultModule,
    CheckoutSessionsCoreModule,
    VaultForwardConfigsCoreModule,
    ForwardAuthenticationsCoreModule,
    ForwardResponsesModule,
    NetworkTokensModule,
    SendingModule,
    ForwardRecordsCoreModule,
  ],
  providers: [PlaceholderSources, ForwardPlanner, ForwardExecutor, ForwardingService],
  exports: [ForwardPlanner, ForwardExecutor, ForwardingService, SendingModule, ForwardRecordsCoreModule],
})
export class ForwardingCoreModule {}
