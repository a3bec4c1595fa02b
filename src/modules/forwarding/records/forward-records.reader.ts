import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Clock, CLOCK } from '../../../platform/time/clock';
import { KeysetRequest, seekPage } from '../../../platform/pagination/keyset';
import { ProblemException } from '../../../platform/problem/problem';
import { ForwardActivityResponse } from './dto/forward-activity.dto';
import { ForwardRecordEntity } from './forward-record.entity';
import { ForwardRecordErrors } from './forward-records.errors';
import { SecretSealer } from '../../vault/secret-sealer';
import { openBodies, OpenedBodies } from './sealed-bodies';

/**
 * Forwards per minute by outcome, zeros included: one index range scan (merchant, created_at) per
 * minute, so the cost follows the window and the records in it, never the table. The outcome rules
 * are the records' own: error_type set = the service's error; else the downstream's status. $3 is
 * the Clock's now, null for the database's.
 */
const ACTIVITY = `
  WITH n AS (SELECT date_trunc('minute', COALESCE($3::timestamptz, now())) AS minute),
       w AS (SELECT n.minute AS last, n.minute - ($2::int - 1) * interval '1 minute' AS first FROM n)
  SELECT m.minute,
         count(r.id) FILTER (WHERE r.error_type IS NULL AND r.status < 400)  AS succeeded,
         count(r.id) FILTER (WHERE r.error_type IS NULL AND r.status >= 400) AS downstream_error,
         count(r.id) FILTER (WHERE r.error_type IS NOT NULL)                 AS failed,
         count(r.id) FILTER (WHERE r.error_type IS NULL AND r.status IS NULL) AS pending,
         w.last + interval '1 minute' AS until
    FROM w
    CROSS JOIN generate_series(w.first, w.last, interval '1 minute') AS m(minute)
    LEFT JOIN vault_forward_requests r
      ON r.merchant_account_id = $1 AND r.created_at >= m.minute AND r.created_at < m.minute + interval '1 minute'
   GROUP BY m.minute, w.last
   ORDER BY m.minute`;

/** Every column of a record, the sealed bodies (select: false in the entity) included. */
const DETAIL_COLUMNS = {
  id: true,
  merchantAccountId: true,
  configId: true,
  method: true,
  targetUrl: true,
  status: true,
  durationMs: true,
  paymentMethodIds: true,
  checkoutSessionId: true,
  authenticationIds: true,
  merchantInitiated: true,
  errorType: true,
  createdAt: true,
  ciphertext: true,
  wrappedKey: true,
  masterKeyId: true,
  requestBodyTruncated: true,
  responseBodyTruncated: true,
} satisfies { [K in keyof ForwardRecordEntity]: true };

interface ActivityRow {
  minute: { toISOString(): string };
  until: { toISOString(): string };
  succeeded: string;
  downstream_error: string;
  failed: string;
  pending: string;
}

/** GET /vault-forward/requests and /{id}: the API's side of the records ForwardRecordsService writes. */
@Injectable()
export class ForwardRecordsReader {
  constructor(
    @InjectRepository(ForwardRecordEntity) private readonly records: Repository<ForwardRecordEntity>,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly sealer: SecretSealer,
  ) {}

  /** One record with its bodies opened (decision 0104). */
  async get(merchantAccountId: string, id: string): Promise<{ record: ForwardRecordEntity; bodies: OpenedBodies }> {
    // The bodies are not selected by default (the list leaves them out): named here, with every other column.
    const found =
      id.length <= 128
        ? await this.records.findOne({ where: { id, merchantAccountId }, select: DETAIL_COLUMNS })
        : null;
    if (!found)
      throw new ProblemException(
        ForwardRecordErrors.recordNotFound,
        `No forward "${id.slice(0, 64)}" exists in this merchant account.`,
      );
    return { record: found, bodies: openBodies(this.sealer, found) };
  }

  async activity(merchantAccountId: string, minutes: number): Promise<ForwardActivityResponse> {
    const rows: ActivityRow[] = await this.records.query(ACTIVITY, [merchantAccountId, minutes, this.clock.now()]);
    return {
      type: 'vault-forward-activity',
      from: rows[0].minute.toISOString(),
      until: rows[rows.length - 1].until.toISOString(),
      minutes: rows.map((row) => ({
        minute: row.minute.toISOString(),
        succeeded: Number(row.succeeded),
        downstream_error: Number(row.downstream_error),
        failed: Number(row.failed),
        pending: Number(row.pending),
      })),
    };
  }

  /** One page, as `seekPage` fetches it (up to keyset.limit + 1 rows). */
  list(merchantAccountId: string, keyset: KeysetRequest): Promise<ForwardRecordEntity[]> {
    return seekPage(
      this.records.createQueryBuilder('r').where('r.merchant_account_id = :merchantAccountId', { merchantAccountId }),
      'r',
      keyset,
    );
  }
}
