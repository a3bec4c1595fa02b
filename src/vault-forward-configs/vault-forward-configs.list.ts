import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Page } from '../common/pagination/page';
import { PaginationService } from '../common/pagination/pagination.service';
import { ListVaultForwardConfigsQuery, VaultForwardConfigResponse } from './dto/vault-forward-config.dto';
import { VaultForwardConfig } from './vault-forward-config.entity';

/** GET /vault-forward/configs: API-only, apart from VaultForwardConfigsService so the worker needs no pagination. */
@Injectable()
export class VaultForwardConfigsList {
  constructor(
    @InjectRepository(VaultForwardConfig) private readonly configs: Repository<VaultForwardConfig>,
    private readonly pagination: PaginationService,
  ) {}

  list(merchantAccountId: string, query: ListVaultForwardConfigsQuery): Promise<Page<VaultForwardConfigResponse>> {
    return this.pagination.paginate({
      query: this.configs
        .createQueryBuilder('c')
        .where('c.merchant_account_id = :merchantAccountId', { merchantAccountId }),
      alias: 'c',
      request: query,
      limits: ListVaultForwardConfigsQuery.limits,
      scope: { endpoint: 'vault-forward-configs', merchantAccountId, filters: {} },
      map: VaultForwardConfigResponse.from,
    });
  }
}
