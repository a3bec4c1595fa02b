import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultForwardConfigsCoreModule } from '../configs/vault-forward-configs-core.module';
import { VaultForwardDefinition } from './vault-forward-definition.entity';
import { VaultForwardDefinitionsController } from './vault-forward-definitions.controller';
import { VaultForwardDefinitionsRepository } from './vault-forward-definitions.repository';
import { VaultForwardDefinitionsService } from './vault-forward-definitions.service';
import { ConfigDefinitions } from '../configs/config-definitions';
import { DefinitionsForConfigs } from './definitions-for-configs';

/** Definitions without routes: what configs (by definition) and authentication methods (their fields) read. */
@Module({
  imports: [TypeOrmModule.forFeature([VaultForwardDefinition]), VaultForwardConfigsCoreModule],
  providers: [
    VaultForwardDefinitionsService,
    VaultForwardDefinitionsRepository,
    { provide: ConfigDefinitions, useClass: DefinitionsForConfigs },
  ],
  exports: [VaultForwardDefinitionsService, ConfigDefinitions],
})
export class VaultForwardDefinitionsCoreModule {}

/** The API's /vault-forward/definitions routes over the core. */
@Module({
  imports: [VaultForwardDefinitionsCoreModule],
  controllers: [VaultForwardDefinitionsController],
  exports: [VaultForwardDefinitionsCoreModule],
})
export class VaultForwardDefinitionsModule {}
