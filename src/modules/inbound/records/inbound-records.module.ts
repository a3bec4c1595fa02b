import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultCoreModule } from '../../vault/vault.module';
import { InboundRequestBodies } from './inbound-request-bodies';
import { InboundRequestBodyPurge } from './inbound-request-body-purge';
import { InboundRequest } from './inbound-request.entity';
import { InboundRequestsController } from './inbound-requests.controller';
import { InboundRequestsRepository } from './inbound-requests.repository';

/**
 * The records of inbound requests: written by the entry, their bodies kept when the route asks (sealed, purged
 * past their retention), listed and read at /vault-forward/inbound-requests.
 */
@Module({
  imports: [TypeOrmModule.forFeature([InboundRequest]), VaultCoreModule],
  controllers: [InboundRequestsController],
  providers: [InboundRequestsRepository, InboundRequestBodies, InboundRequestBodyPurge],
  exports: [InboundRequestsRepository, InboundRequestBodies],
})
export class InboundRecordsModule {}
