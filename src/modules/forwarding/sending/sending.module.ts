import { Module } from '@nestjs/common';
import { ForwardAuthenticationsCoreModule } from '../../forwarding-setup/authentication-methods/forward-authentications.module';
import { AuthenticationSteps } from './authentication-steps';
import { DownstreamClient } from './downstream-client';
import { InflightBytes } from './inflight-bytes';
import { OAuth2Tokens } from './oauth2-tokens';
import { SharedTokens } from './shared-tokens';
import { VaultCoreModule } from '../../vault/vault.module';

/**
 * Sending a request out: the connection pools, the in-flight bytes bound and the authentication steps. One per
 * process (ForwardingCoreModule imports it), so a process has one set of pools and one token cache.
 */
@Module({
  imports: [ForwardAuthenticationsCoreModule, VaultCoreModule],
  providers: [DownstreamClient, InflightBytes, AuthenticationSteps, OAuth2Tokens, SharedTokens],
  exports: [DownstreamClient, InflightBytes, AuthenticationSteps],
})
export class SendingCoreModule {}
