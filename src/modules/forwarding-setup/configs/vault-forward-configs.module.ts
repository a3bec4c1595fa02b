import { DynamicModule, Module, ModuleMetadata } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultForwardDefinitionsCoreModule } from '../definitions/vault-forward-definitions.module';
import { VaultForwardConfig } from './vault-forward-config.entity';
import { VaultForwardConfigsCoreModule } from './vault-forward-configs-core.module';
import { VaultForwardConfigsController } from './vault-forward-configs.controller';
import { VaultForwardConfigsList } from './vault-forward-configs.list';

/**
 * The API's /vault-forward/configs routes over the core; a config by definition reads the definitions. Its
 * answers embed the config's authentication methods through ConfigAuthentications, which the module given
 * to withAuthentications provides (authentication methods sit above configs, so the composition root wires it).
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([VaultForwardConfig]),
    VaultForwardConfigsCoreModule,
    VaultForwardDefinitionsCoreModule,
  ],
  controllers: [VaultForwardConfigsController],
  providers: [VaultForwardConfigsList],
  exports: [VaultForwardConfigsCoreModule],
})
export class VaultForwardConfigsModule {
  static withAuthentications(provider: NonNullable<ModuleMetadata['imports']>[number]): DynamicModule {
    return { module: VaultForwardConfigsModule, imports: [provider] };
  }
}
