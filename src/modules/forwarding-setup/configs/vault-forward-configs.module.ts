import { DynamicModule, Module, ModuleMetadata } from '@nestjs/common';
import { VaultForwardConfigsCoreModule } from './vault-forward-configs-core.module';
import { VaultForwardConfigsController } from './vault-forward-configs.controller';

/**
 * The API's /vault-forward/configs routes over the core. A config by definition reads the definitions
 * (ConfigDefinitions) and its answers embed the config's authentication methods (ConfigAuthentications):
 * both sit above configs, so the composition root hands the modules that provide them to wiredWith.
 */
@Module({
  imports: [VaultForwardConfigsCoreModule],
  controllers: [VaultForwardConfigsController],
  exports: [VaultForwardConfigsCoreModule],
})
export class VaultForwardConfigsModule {
  static wiredWith(providers: NonNullable<ModuleMetadata['imports']>): DynamicModule {
    return { module: VaultForwardConfigsModule, imports: providers };
  }
}
