import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MerchantAccountsModule } from '../accounts/merchant-accounts.module';
import { ApiKey } from './api-key.entity';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { AuthGuard } from './auth.guard';
import { Authenticator } from './authenticator.service';
import { TokenVerifier } from './token-verifier.service';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKey]), MerchantAccountsModule],
  controllers: [ApiKeysController],
  providers: [
    ApiKeysService,
    ApiKeysRepository,
    TokenVerifier,
    Authenticator,
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [ApiKeysService, Authenticator],
})
export class AuthModule {}
