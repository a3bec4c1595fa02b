import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { InboundRequest } from './inbound-request.entity';
import { InboundRequestsController } from './inbound-requests.controller';
import { InboundRequestsRepository } from './inbound-requests.repository';

/** The records of inbound requests: written by the entry, listed at /vault-forward/inbound-requests. */
@Module({
  imports: [TypeOrmModule.forFeature([InboundRequest])],
  controllers: [InboundRequestsController],
  providers: [InboundRequestsRepository],
  exports: [InboundRequestsRepository],
})
export class InboundRecordsModule {}
