import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultForwardConfig } from './vault-forward-config.entity';
import { VaultForwardConfigsController } from './vault-forward-configs.controller';
import { VaultForwardConfigsList } from './vault-forward-configs.list';
import { VaultForwardConfigsService } from './vault-forward-configs.service';

/** The configs without routes or pagination: what forwarding (in the API and the worker) needs. */
@Module({
  imports: [TypeOrmModule.forFeature([VaultForwardConfig])],
  providers: [VaultForwardConfigsService],
  exports: [VaultForwardConfigsService],
})
export class VaultForwardConfigsCoreModule {}

/** The API's /vault-forward/configs routes over the core. */
@Module({
  imports: [TypeOrmModule.forFeature([VaultForwardConfig]), VaultForwardConfigsCoreModule],
  controllers: [VaultForwardConfigsController],
  providers: [VaultForwardConfigsList],
  exports: [VaultForwardConfigsCoreModule],
})
export class VaultForwardConfigsModule {}
