import { Module } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { HttpTokenRequestor } from './http-token-requestor';
import { NO_TOKEN_REQUESTOR, TOKEN_REQUESTOR, TokenRequestor } from './token-requestor';

/** The token requestor of this process: the configured HTTP endpoint, or none (docs/decisions/0100). */
@Module({
  providers: [
    {
      provide: TOKEN_REQUESTOR,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): TokenRequestor =>
        config.networkTokenRequestor ? new HttpTokenRequestor(config.networkTokenRequestor) : NO_TOKEN_REQUESTOR,
    },
  ],
  exports: [TOKEN_REQUESTOR],
})
export class NetworkTokensCoreModule {}
