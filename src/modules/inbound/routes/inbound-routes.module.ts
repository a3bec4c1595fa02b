import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultCoreModule } from '../../vault/vault.module';
import { InboundRoute } from './inbound-route.entity';
import { InboundRoutesController } from './inbound-routes.controller';
import { InboundRoutesRepository } from './inbound-routes.repository';
import { InboundRoutesService } from './inbound-routes.service';

/** /vault-forward/inbound-routes, and the routes' service the entry (inbound/entry/) reads them through. */
@Module({
  imports: [TypeOrmModule.forFeature([InboundRoute]), VaultCoreModule],
  controllers: [InboundRoutesController],
  providers: [InboundRoutesService, InboundRoutesRepository],
  exports: [InboundRoutesService],
})
export class InboundRoutesModule {}
