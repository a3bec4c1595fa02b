import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultForwardConfigsCoreModule } from '../configs/vault-forward-configs-core.module';
import { VaultForwardDefinitionsCoreModule } from '../definitions/vault-forward-definitions.module';
import { VaultCoreModule } from '../../vault/vault.module';
import { ConfigAuthentications } from '../configs/config-authentications';
import { EmbeddedAuthentications } from './embedded-authentications';
import { ForwardAuthentication } from './forward-authentication.entity';
import { AuthenticationKindsController, ForwardAuthenticationsController } from './forward-authentications.controller';
import { ForwardAuthenticationsRepository } from './forward-authentications.repository';
import { ForwardAuthenticationsService } from './forward-authentications.service';

/** Stored authentication methods without routes: forForward for the forward path (API and worker). */
@Module({
  imports: [
    TypeOrmModule.forFeature([ForwardAuthentication]),
    VaultForwardConfigsCoreModule,
    VaultForwardDefinitionsCoreModule,
    VaultCoreModule,
  ],
  providers: [ForwardAuthenticationsService, ForwardAuthenticationsRepository],
  exports: [ForwardAuthenticationsService, ForwardAuthenticationsRepository],
})
export class ForwardAuthenticationsCoreModule {}

/** The API's /vault-forward/configs/{config_id}/authentications and /vault-forward/authentication-kinds routes over the core. */
@Module({
  imports: [ForwardAuthenticationsCoreModule, VaultForwardConfigsCoreModule],
  controllers: [ForwardAuthenticationsController, AuthenticationKindsController],
  providers: [{ provide: ConfigAuthentications, useClass: EmbeddedAuthentications }],
  exports: [ForwardAuthenticationsCoreModule, ConfigAuthentications],
})
export class ForwardAuthenticationsModule {}
