import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { KeysetRequest, seekPage } from '../../../platform/pagination/keyset';
import { VaultForwardConfigsService } from '../configs/vault-forward-configs.service';
import { ForwardAuthentication } from './forward-authentication.entity';

/** GET /vault-forward/configs/{config_id}/authentications: API-only, apart from the service so the worker needs no pagination. */
@Injectable()
export class ForwardAuthenticationsList {
  constructor(
    @InjectRepository(ForwardAuthentication) private readonly methods: Repository<ForwardAuthentication>,
    private readonly configs: VaultForwardConfigsService,
  ) {}

  async list(merchantAccountId: string, configId: string, keyset: KeysetRequest): Promise<ForwardAuthentication[]> {
    await this.configs.get(merchantAccountId, configId);
    return seekPage(
      this.methods
        .createQueryBuilder('m')
        .where('m.merchant_account_id = :merchantAccountId AND m.config_id = :configId', {
          merchantAccountId,
          configId,
        }),
      'm',
      keyset,
    );
  }
}
