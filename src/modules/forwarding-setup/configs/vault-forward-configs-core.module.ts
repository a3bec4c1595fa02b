import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultForwardConfig } from './vault-forward-config.entity';
import { VaultForwardConfigsRepository } from './vault-forward-configs.repository';
import { VaultForwardConfigsService } from './vault-forward-configs.service';

/**
 * The configs without routes: what forwarding (in the API and the worker) and the
 * definitions need. A file of its own: the routes' module imports the definitions, which import this.
 */
@Module({
  imports: [TypeOrmModule.forFeature([VaultForwardConfig])],
  providers: [VaultForwardConfigsService, VaultForwardConfigsRepository],
  exports: [VaultForwardConfigsService, VaultForwardConfigsRepository],
})
export class VaultForwardConfigsCoreModule {}
