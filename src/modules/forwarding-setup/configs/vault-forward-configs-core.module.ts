import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultForwardConfig } from './vault-forward-config.entity';
import { VaultForwardConfigsService } from './vault-forward-configs.service';

/**
 * The configs without routes or pagination: what forwarding (in the API and the worker) and the
 * definitions need. A file of its own: the routes' module imports the definitions, which import this.
 */
@Module({
  imports: [TypeOrmModule.forFeature([VaultForwardConfig])],
  providers: [VaultForwardConfigsService],
  exports: [VaultForwardConfigsService],
})
export class VaultForwardConfigsCoreModule {}
