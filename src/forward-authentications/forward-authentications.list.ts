import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Page } from '../common/pagination/page';
import { PaginationService } from '../common/pagination/pagination.service';
import { VaultForwardConfigsService } from '../vault-forward-configs/vault-forward-configs.service';
import { ForwardAuthenticationResponse, ListForwardAuthenticationsQuery } from './dto/forward-authentication.dto';
import { ForwardAuthentication } from './forward-authentication.entity';

/** GET /vault-forward/configs/{config_id}/authentications: API-only, apart from the service so the worker needs no pagination. */
@Injectable()
export class ForwardAuthenticationsList {
  constructor(
    @InjectRepository(ForwardAuthentication) private readonly methods: Repository<ForwardAuthentication>,
    private readonly configs: VaultForwardConfigsService,
    private readonly pagination: PaginationService,
  ) {}

  async list(
    merchantAccountId: string,
    configId: string,
    query: ListForwardAuthenticationsQuery,
  ): Promise<Page<ForwardAuthenticationResponse>> {
    await this.configs.get(merchantAccountId, configId);
    return this.pagination.paginate({
      query: this.methods
        .createQueryBuilder('m')
        .where('m.merchant_account_id = :merchantAccountId AND m.config_id = :configId', {
          merchantAccountId,
          configId,
        }),
      alias: 'm',
      request: query,
      limits: ListForwardAuthenticationsQuery.limits,
      scope: { endpoint: 'vault-forward-authentications', merchantAccountId, filters: { config_id: configId } },
      map: ForwardAuthenticationResponse.from,
    });
  }
}
