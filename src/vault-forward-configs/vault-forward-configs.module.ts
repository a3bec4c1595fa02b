import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultForwardConfig } from './vault-forward-config.entity';
import { VaultForwardConfigsController } from './vault-forward-configs.controller';
import { VaultForwardConfigsService } from './vault-forward-configs.service';

@Module({
  imports: [TypeOrmModule.forFeature([VaultForwardConfig])],
  controllers: [VaultForwardConfigsController],
  providers: [VaultForwardConfigsService],
  exports: [VaultForwardConfigsService],
})
export class VaultForwardConfigsModule {}
