import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { ForwardAuthenticationsModule } from '../forward-authentications/forward-authentications.module';
import { VaultForwardConfigsModule } from '../vault-forward-configs/vault-forward-configs.module';
import { VaultModule } from '../vault/vault.module';
import { DownstreamClient } from './downstream-client';
import { ForwardHttpHandler } from './forward-http-handler';
import { VaultForwardRequest } from './forward-request.entity';
import { ForwardRecordsService } from './forward-records.service';
import { ForwardingController } from './forwarding.controller';
import { ForwardingService } from './forwarding.service';
import { InflightBytes } from './inflight-bytes';
import { AuthenticationSteps } from './outbound/authentication-steps';

@Module({
  imports: [TypeOrmModule.forFeature([VaultForwardRequest]), AuthModule, VaultModule, VaultForwardConfigsModule, ForwardAuthenticationsModule],
  controllers: [ForwardingController],
  providers: [
    ForwardingService,
    DownstreamClient,
    ForwardRecordsService,
    ForwardHttpHandler,
    InflightBytes,
    AuthenticationSteps,
  ],
  exports: [ForwardHttpHandler],
})
export class ForwardingModule {}
