import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MerchantAccount } from './merchant-account.entity';
import { MerchantAccountsController } from './merchant-accounts.controller';
import { MerchantAccountsRepository } from './merchant-accounts.repository';
import { MerchantAccountsService } from './merchant-accounts.service';
import { SecureFieldsOrigins } from './secure-fields-origins';

@Module({
  imports: [TypeOrmModule.forFeature([MerchantAccount])],
  controllers: [MerchantAccountsController],
  providers: [MerchantAccountsService, MerchantAccountsRepository, SecureFieldsOrigins],
  exports: [MerchantAccountsService, SecureFieldsOrigins],
})
export class MerchantAccountsModule {}
