import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultCoreModule } from '../../vault/vault.module';
import { InboundRoute } from './inbound-route.entity';
import { InboundRoutesController } from './inbound-routes.controller';
import { InboundRoutesRepository } from './inbound-routes.repository';
import { InboundRoutesService } from './inbound-routes.service';

/** The routes' service without HTTP: the entry (inbound/entry/) and the CLI read and change routes through it. */
@Module({
  imports: [TypeOrmModule.forFeature([InboundRoute]), VaultCoreModule],
  providers: [InboundRoutesService, InboundRoutesRepository],
  exports: [InboundRoutesService],
})
export class InboundRoutesCoreModule {}

/** /vault-forward/inbound-routes. */
@Module({
  imports: [InboundRoutesCoreModule],
  controllers: [InboundRoutesController],
  exports: [InboundRoutesCoreModule],
})
export class InboundRoutesModule {}
