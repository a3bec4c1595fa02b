import { Module } from '@nestjs/common';
import { ForwardAuthenticationsCoreModule } from '../forward-authentications/forward-authentications.module';
import { VaultForwardConfigsCoreModule } from '../vault-forward-configs/vault-forward-configs-core.module';
import { VaultModule } from '../vault/vault.module';
import { CheckoutSessionsCoreModule } from '../checkout-sessions/checkout-sessions.module';
import { PlaceholderSources } from './placeholder-sources';
import { DownstreamClient } from '../outbound/downstream-client';
import { ForwardExecutor } from './forward-executor';
import { ForwardPlanner } from './forward-planner';
import { ForwardRecordsService } from '../forward-records/forward-records.service';
import { InflightBytes } from '../outbound/inflight-bytes';
import { AuthenticationSteps } from '../outbound/authentication-steps';
import { OAuth2Tokens } from '../outbound/oauth2-tokens';
import { ForwardResponsesModule } from '../forward-responses/forward-responses.module';
import { NetworkTokensModule } from '../network-tokens/network-tokens.module';

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
  ],
  providers: [
    PlaceholderSources,
    ForwardPlanner,
    ForwardExecutor,
    DownstreamClient,
    ForwardRecordsService,
    InflightBytes,
    AuthenticationSteps,
    OAuth2Tokens,
  ],
  exports: [ForwardPlanner, ForwardExecutor, DownstreamClient, ForwardRecordsService, InflightBytes],
})
export class ForwardingCoreModule {}
