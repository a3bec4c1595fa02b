import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKey } from '../modules/merchants/auth/api-key.entity';
import { ApiKeysRepository } from '../modules/merchants/auth/api-keys.repository';
import { ApiKeysService } from '../modules/merchants/auth/api-keys.service';
import { PaginationModule } from '../platform/pagination/pagination.module';
import { CoreModule, CoreOptions } from '../app/core.module';
import { MerchantAccountsModule } from '../modules/merchants/accounts/merchant-accounts.module';
import { VaultCoreModule } from '../modules/vault/vault.module';
import { LedgerStoreCoreModule } from '../modules/forwarding/ledger/ledger.module';
import { InboundRoutesCoreModule } from '../modules/inbound/routes/inbound-routes.module';

/** The services the CLI drives, without HTTP, the guard or the queue. */
@Module({})
export class CliModule {
  static forRoot(options: Omit<CoreOptions, 'role'>): DynamicModule {
    return {
      module: CliModule,
      imports: [
        CoreModule.forRoot({ ...options, role: 'cli' }),
        PaginationModule,
        TypeOrmModule.forFeature([ApiKey]),
        MerchantAccountsModule,
        VaultCoreModule,
        LedgerStoreCoreModule,
        InboundRoutesCoreModule,
      ],
      providers: [ApiKeysService, ApiKeysRepository],
    };
  }
}
