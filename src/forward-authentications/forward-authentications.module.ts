import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultForwardConfigsModule } from '../vault-forward-configs/vault-forward-configs.module';
import { VaultModule } from '../vault/vault.module';
import { ForwardAuthentication } from './forward-authentication.entity';
import { AuthenticationKindsController, ForwardAuthenticationsController } from './forward-authentications.controller';
import { ForwardAuthenticationsService } from './forward-authentications.service';

/** Stored authentication methods of forwarding configs; ForwardingModule imports it for forForward. */
@Module({
  imports: [TypeOrmModule.forFeature([ForwardAuthentication]), VaultForwardConfigsModule, VaultModule],
  controllers: [ForwardAuthenticationsController, AuthenticationKindsController],
  providers: [ForwardAuthenticationsService],
  exports: [ForwardAuthenticationsService],
})
export class ForwardAuthenticationsModule {}
