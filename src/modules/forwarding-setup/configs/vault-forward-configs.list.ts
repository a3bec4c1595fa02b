import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { KeysetRequest, seekPage } from '../../../platform/pagination/keyset';
import { VaultForwardConfig } from './vault-forward-config.entity';

/** GET /vault-forward/configs: API-only, apart from VaultForwardConfigsService so the worker needs no pagination. */
@Injectable()
export class VaultForwardConfigsList {
  constructor(@InjectRepository(VaultForwardConfig) private readonly configs: Repository<VaultForwardConfig>) {}

  /** One page, as `seekPage` fetches it (up to keyset.limit + 1 rows). */
  list(merchantAccountId: string, keyset: KeysetRequest): Promise<VaultForwardConfig[]> {
    return seekPage(
      this.configs.createQueryBuilder('c').where('c.merchant_account_id = :merchantAccountId', { merchantAccountId }),
      'c',
      keyset,
    );
  }
}
