import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import type { KeptBodies } from './inbound-request-bodies';
import { InboundRequest } from './inbound-request.entity';

type NewInboundRequest = Omit<
  InboundRequest,
  | 'createdAt'
  | 'bodiesKeptUntil'
  | 'requestBodyTruncated'
  | 'responseBodyTruncated'
  | 'ciphertext'
  | 'wrappedKey'
  | 'masterKeyId'
>;

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

  /** The record, with its sealed bodies when it keeps some: kept until `days` after now (the database's). */
  async insert(record: NewInboundRequest, bodies: KeptBodies | null): Promise<void> {
    await this.requests.query(
      `INSERT INTO inbound_requests (id, merchant_account_id, route_id, request_id, caller, method, path, outcome,
              status, problem_code, upstream_status, payment_method_ids, checkout_session_ids, ciphertext,
              wrapped_key, master_key_id, request_body_truncated, response_body_truncated, bodies_kept_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
               now() + make_interval(days => $19::int))`,
      [
        record.id,
        record.merchantAccountId,
        record.routeId,
        record.requestId,
        record.caller,
        record.method,
        record.path,
        record.outcome,
        record.status,
        record.problemCode,
        record.upstreamStatus,
        record.paymentMethodIds,
        record.checkoutSessionIds,
        bodies?.sealed.ciphertext ?? null,
        bodies?.sealed.wrappedKey ?? null,
        bodies?.sealed.masterKeyId ?? null,
        bodies?.requestBodyTruncated === true,
        bodies?.responseBodyTruncated === true,
        bodies?.days ?? null,
      ],
    );
  }

  /** A record of the merchant account, with its sealed bodies. */
  find(merchantAccountId: string, id: string): Promise<InboundRequest | null> {
    return this.requests
      .createQueryBuilder('i')
      .addSelect(['i.ciphertext', 'i.wrappedKey', 'i.masterKeyId'])
      .where('i.id = :id AND i.merchant_account_id = :merchantAccountId', { id, merchantAccountId })
      .getOne();
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows); one route's only when given. */
  page(merchantAccountId: string, routeId: string | undefined, keyset: KeysetRequest): Promise<InboundRequest[]> {
    const conditions = [where('i.merchant_account_id = ?', merchantAccountId)];
    if (routeId !== undefined) conditions.push(where('i.route_id = ?', routeId));
    return this.keyset.seekPage(conditions, keyset);
  }

  /**
   * Nulls the sealed bodies of up to `batch` records past their own `bodies_kept_until` or older than the
   * operator's ceiling in days, as at `now` (null: the database's); SKIP LOCKED, so purges in several processes
   * split the rows. How many records lost their bodies.
   */
  async purgeBodies(now: Date | null, ceilingDays: number, batch: number): Promise<number> {
    const [, updated] = await this.requests.query<[unknown[], number]>(
      `UPDATE inbound_requests
          SET ciphertext = NULL, wrapped_key = NULL, master_key_id = NULL, request_body_truncated = false,
              response_body_truncated = false
        WHERE id IN (SELECT id FROM inbound_requests
                      WHERE wrapped_key IS NOT NULL
                        AND (bodies_kept_until <= coalesce($1::timestamptz, now())
                             OR created_at < coalesce($1::timestamptz, now()) - make_interval(days => $2::int))
                      LIMIT $3 FOR UPDATE SKIP LOCKED)`,
      [now, ceilingDays, batch],
    );
    return updated;
  }
}
