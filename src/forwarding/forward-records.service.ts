import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Page } from '../common/pagination/page';
import { PaginationService } from '../common/pagination/pagination.service';
import { Sql } from '../database/sql';
import { ProblemException } from '../common/problem/problem';
import { ForwardRequestResponse, ListForwardRequestsQuery } from './dto/forward-request.dto';
import { VaultForwardRequest } from './forward-request.entity';
import { ForwardingErrors } from './forwarding.errors';

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

/** Records are written in batches: one multi-row INSERT (one commit, one WAL flush) per batch. */
const FLUSH_EVERY_MS = 50;
const MAX_BATCH = 500;

@Injectable()
export class ForwardRecordsService implements OnModuleDestroy {
  private readonly logger = new Logger('ForwardRecords');
  private pending: ForwardRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    @InjectRepository(VaultForwardRequest) private readonly records: Repository<VaultForwardRequest>,
    private readonly pagination: PaginationService,
    private readonly sql: Sql,
  ) {}

  /**
   * Queues a record; it is in the table within ~50 ms. A commit per forward would make every forward
   * wait for a WAL flush (or exhaust the pool behind it); batching keeps that off the hot path.
   * A failure to record is logged, never turned into a failed forward.
   */
  write(record: ForwardRecord): void {
    this.pending.push(record);
    if (this.pending.length >= MAX_BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_EVERY_MS);
  }

  /** Writes everything queued so far (also on shutdown). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return this.flushing;
    this.flushing = this.flushing.then(() => this.insert(batch));
    return this.flushing;
  }

  async onModuleDestroy(): Promise<void> {
    await this.flush();
  }

  private async insert(batch: ForwardRecord[]): Promise<void> {
    const column = <K extends keyof ForwardRecord>(key: K) => batch.map((r) => r[key]);
    // Arrays of arrays do not fit unnest(); the id lists travel as text and are cast per row.
    const ids = (key: 'paymentMethodIds' | 'authenticationIds') => batch.map((r) => `{${r[key].join(',')}}`);
    try {
      await this.sql.prepared(
        'forwarding.record-batch',
        `INSERT INTO vault_forward_requests
           (id, merchant_account_id, config_id, method, target_url, status, duration_ms, payment_method_ids, authentication_ids, error_type)
         SELECT id, merchant, config, method, target, status, duration, pms::uuid[], auths::uuid[], error
           FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::int[], $7::float8[], $8::text[], $9::text[], $10::text[])
                AS r(id, merchant, config, method, target, status, duration, pms, auths, error)
         ON CONFLICT (id) DO NOTHING`,
        [
          column('id'),
          column('merchantAccountId'),
          column('configId'),
          column('method'),
          column('targetUrl'),
          column('status'),
          column('durationMs'),
          ids('paymentMethodIds'),
          ids('authenticationIds'),
          column('errorType'),
        ],
      );
    } catch (error) {
      this.logger.error(`could not record ${batch.length} forwards: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

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
