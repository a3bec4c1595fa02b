import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Page } from '../common/pagination/page';
import { PaginationService } from '../common/pagination/pagination.service';
import { defineProblem, ProblemException } from '../common/problem/problem';
import { ForwardRequestResponse, ListForwardRequestsQuery } from './dto/forward-request.dto';
import { VaultForwardRequest } from './forward-request.entity';

export const ForwardRecordErrors = {
  notFound: defineProblem({
    code: 'vault-forward-request-not-found',
    status: 404,
    title: 'Forward record not found',
    description: 'No forward with this request id exists in the merchant account of the request.',
  }),
};

export interface ForwardRecord {
  id: string;
  merchantAccountId: string;
  configId: string | null;
  method: string | null;
  targetUrl: string | null;
  status: number | null;
  durationMs: number;
  paymentMethodIds: string[];
  authenticationIds: string[];
  errorType: string | null;
}

@Injectable()
export class ForwardRecordsService {
  private readonly logger = new Logger('ForwardRecords');

  constructor(
    @InjectRepository(VaultForwardRequest) private readonly records: Repository<VaultForwardRequest>,
    private readonly pagination: PaginationService,
  ) {}

  /** One prepared-style INSERT; a failure to record is logged, never turned into a failed forward. */
  async write(record: ForwardRecord): Promise<void> {
    try {
      await this.records.query(
        `INSERT INTO vault_forward_requests
           (id, merchant_account_id, config_id, method, target_url, status, duration_ms, payment_method_ids, authentication_ids, error_type)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::uuid[], $9::uuid[], $10) ON CONFLICT (id) DO NOTHING`,
        [
          record.id,
          record.merchantAccountId,
          record.configId,
          record.method,
          record.targetUrl,
          record.status,
          record.durationMs,
          record.paymentMethodIds,
          record.authenticationIds,
          record.errorType,
        ],
      );
    } catch (error) {
      this.logger.error(`could not record forward ${record.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async get(merchantAccountId: string, id: string): Promise<VaultForwardRequest> {
    const found = id.length <= 128 ? await this.records.findOneBy({ id, merchantAccountId }) : null;
    if (!found) throw new ProblemException(ForwardRecordErrors.notFound, `No forward "${id.slice(0, 64)}" exists in this merchant account.`);
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
