import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Page } from '../common/pagination/page';
import { PaginationService } from '../common/pagination/pagination.service';
import { ProblemException } from '../common/problem/problem';
import { ForwardRequestResponse, ListForwardRequestsQuery } from './dto/forward-request.dto';
import { VaultForwardRequest } from './forward-request.entity';
import { ForwardingErrors } from './forwarding.errors';

/** GET /vault-forward/requests and /{id}: the API's side of the records ForwardRecordsService writes. */
@Injectable()
export class ForwardRecordsReader {
  constructor(
    @InjectRepository(VaultForwardRequest) private readonly records: Repository<VaultForwardRequest>,
    private readonly pagination: PaginationService,
  ) {}

  async get(merchantAccountId: string, id: string): Promise<VaultForwardRequest> {
    const found = id.length <= 128 ? await this.records.findOneBy({ id, merchantAccountId }) : null;
    if (!found) throw new ProblemException(ForwardingErrors.recordNotFound, `No forward "${id.slice(0, 64)}" exists in this merchant account.`);
    return found;
  }

  list(merchantAccountId: string, query: ListForwardRequestsQuery): Promise<Page<ForwardRequestResponse>> {
    return this.pagination.paginate({
      query: this.records.createQueryBuilder('r').where('r.merchant_account_id = :merchantAccountId', { merchantAccountId }),
      alias: 'r',
      request: query,
      limits: ListForwardRequestsQuery.limits,
      scope: { endpoint: 'vault-forward-requests', merchantAccountId, filters: {} },
      map: ForwardRequestResponse.from,
    });
  }
}
