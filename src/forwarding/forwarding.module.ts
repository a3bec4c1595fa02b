import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
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
import { ForwardAuthenticationsService } from './outbound/usable-method.tmp';

@Module({
  imports: [TypeOrmModule.forFeature([VaultForwardRequest]), AuthModule, VaultModule, VaultForwardConfigsModule],
  controllers: [ForwardingController],
  providers: [
    ForwardingService,
    DownstreamClient,
    ForwardRecordsService,
    ForwardHttpHandler,
    InflightBytes,
    AuthenticationSteps,
    { provide: ForwardAuthenticationsService, useValue: { forForward: () => Promise.reject(new Error('h7 not merged')) } },
  ],
  exports: [ForwardHttpHandler],
})
export class ForwardingModule {}
