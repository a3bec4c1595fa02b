import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import { InboundRequest } from './inbound-request.entity';

type NewInboundRequest = Omit<InboundRequest, 'createdAt'>;

/** Every read and write of inbound_requests. */
@Injectable()
export class InboundRequestsRepository {
  private readonly keyset: KeysetTable<InboundRequest>;

  constructor(
    @InjectRepository(InboundRequest) private readonly requests: Repository<InboundRequest>,
    sql: Sql,
  ) {
    this.keyset = new KeysetTable(sql, requests.metadata, 'i');
  }

  async insert(record: NewInboundRequest): Promise<void> {
    await this.requests.insert(record);
  }

  find(merchantAccountId: string, id: string): Promise<InboundRequest | null> {
    return this.requests.findOneBy({ id, merchantAccountId });
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows); one route's only when given. */
  page(merchantAccountId: string, routeId: string | undefined, keyset: KeysetRequest): Promise<InboundRequest[]> {
    const conditions = [where('i.merchant_account_id = ?', merchantAccountId)];
    if (routeId !== undefined) conditions.push(where('i.route_id = ?', routeId));
    return this.keyset.seekPage(conditions, keyset);
  }
}
