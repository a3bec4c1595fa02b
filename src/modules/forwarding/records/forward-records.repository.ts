import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import type { ForwardRecord } from './forward-record';
import { columns, finalColumns, values } from './forward-record-columns';
import { ForwardRecordEntity } from './forward-record.entity';
import { bodyColumns } from './sealed-bodies';

const COLUMNS =
  `(id, merchant_account_id, config_id, method, target_url, status, duration_ms, payment_method_ids, ` +
  `authentication_ids, error_type, created_at, checkout_session_id, merchant_initiated)`;
const ROWS = `SELECT id, merchant, config, method, target, status, duration, pms::uuid[], auths::uuid[], error,
         coalesce(at, now()), session, mit
  FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::int[], $7::float8[], $8::text[], $9::text[],
              $10::text[], $11::timestamptz[], $12::uuid[], $13::bool[])
       AS r(id, merchant, config, method, target, status, duration, pms, auths, error, at, session, mit)`;
/** The outcome's columns: the disclosure's and the redacted bodies (decision 0104), which only the outcome carries. */
const FINAL_COLUMNS =
  `${COLUMNS.slice(0, -1)}, ciphertext, wrapped_key, master_key_id, request_body_truncated, ` +
  `response_body_truncated)`;
const SET_BODIES =
  `ciphertext = EXCLUDED.ciphertext, wrapped_key = EXCLUDED.wrapped_key, master_key_id = EXCLUDED.master_key_id, ` +
  `request_body_truncated = EXCLUDED.request_body_truncated, response_body_truncated = EXCLUDED.response_body_truncated`;
/** A disclosure: who sent what where, with no outcome yet (status NULL). Replaying it again changes nothing. */
const INSERT_PENDING = `INSERT INTO vault_forward_requests ${COLUMNS} ${ROWS} ON CONFLICT (id) DO NOTHING`;
/**
 * INSERT_PENDING for a batch of one, the usual case at low load: a plain VALUES row, which PostgreSQL
 * plans and runs without unnest's thirteen array parameters to parse and expand (docs/benchmarks.md
 * measures both). Same parameters, one value each; same effect.
 */
const INSERT_ONE_PENDING = `INSERT INTO vault_forward_requests ${COLUMNS}
  VALUES ($1::text, $2::text, $3::uuid, $4::text, $5::text, $6::int, $7::float8, $8::text::uuid[], $9::text::uuid[],
          $10::text, coalesce($11::timestamptz, now()), $12::uuid, $13::bool)
  ON CONFLICT (id) DO NOTHING`;
/**
 * Counts one use of each card of each record in `source` (rows id, merchant_account_id,
 * payment_method_ids, created_at): usage_count + 1 per forward, last_used_at the latest forward's
 * start. Card rows are locked in id order, so two batches sharing cards cannot deadlock each other.
 * A card deleted since is simply not found. Runs in the statement that writes the outcomes, and only
 * for the rows whose outcome that statement set (status NULL before), so a record replayed or
 * retried any number of times counts once.
 */
const countUses = (source: string) => `uses AS (
    SELECT s.merchant_account_id AS merchant, card.id AS card_id, count(*) AS n, max(s.created_at) AS at
      FROM ${source} s CROSS JOIN LATERAL unnest(s.payment_method_ids) AS card(id)
     GROUP BY 1, 2
  ), locked AS MATERIALIZED (
    SELECT p.id FROM payment_methods p JOIN uses ON p.id = uses.card_id AND p.merchant_account_id = uses.merchant
     ORDER BY p.id FOR UPDATE OF p
  ), counted AS (
    UPDATE payment_methods p
       SET usage_count = LEAST(p.usage_count + uses.n, 2147483647)::int,
           last_used_at = GREATEST(p.last_used_at, uses.at)
      FROM locked, uses
     WHERE p.id = locked.id AND uses.card_id = locked.id
    RETURNING p.id
  )`;
/**
 * The whole record with its outcome: inserted if its disclosure is not in the table (yet), or fills
 * in the outcome of a pending row. It carries every column, so it and the disclosure commute: the
 * spool can replay either after the other, any number of times. $14 says which records released
 * card data (their uses are counted); a refused forward names its cards too but sent nothing.
 */
const UPSERT_FINAL = `WITH r AS (
    SELECT id, merchant, config, method, target, status, duration, pms::uuid[] AS pms, auths::uuid[] AS auths, error,
           coalesce(at, now()) AS at, session, mit, disclosed, decode(ct, 'base64') AS ct, decode(wk, 'base64') AS wk, mk,
           coalesce(rbt, false) AS rbt, coalesce(sbt, false) AS sbt
      FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::int[], $7::float8[], $8::text[], $9::text[],
                  $10::text[], $11::timestamptz[], $12::uuid[], $13::bool[], $14::bool[],
                  $15::text[], $16::text[], $17::text[], $18::bool[], $19::bool[])
           AS r(id, merchant, config, method, target, status, duration, pms, auths, error, at, session, mit, disclosed,
                ct, wk, mk, rbt, sbt)
  ), done AS (
    INSERT INTO vault_forward_requests ${FINAL_COLUMNS}
    SELECT id, merchant, config, method, target, status, duration, pms, auths, error, at, session, mit, ct, wk, mk, rbt, sbt
      FROM r
    ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, duration_ms = EXCLUDED.duration_ms, error_type = EXCLUDED.error_type,
      ${SET_BODIES}
    WHERE vault_forward_requests.status IS NULL
    RETURNING id, merchant_account_id, payment_method_ids, created_at
  ), released AS (
    SELECT done.* FROM done JOIN r ON r.id = done.id WHERE r.disclosed
  ), ${countUses('released')}
  SELECT count(*)::int AS written FROM done`;
/**
 * The outcome of disclosures committed by this process: a plain UPDATE of known rows is cheaper than
 * the upsert's speculative insert. A row it does not find (not expected) goes through UPSERT_FINAL.
 * Every row here released card data, so each one it sets counts its cards' uses.
 */
const UPDATE_OUTCOME = `WITH done AS (
    UPDATE vault_forward_requests AS t SET status = u.status, duration_ms = u.duration, error_type = u.error,
           ciphertext = decode(u.ct, 'base64'), wrapped_key = decode(u.wk, 'base64'), master_key_id = u.mk,
           request_body_truncated = coalesce(u.rbt, false), response_body_truncated = coalesce(u.sbt, false)
      FROM unnest($1::text[], $2::int[], $3::float8[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::bool[])
           AS u(id, status, duration, error, ct, wk, mk, rbt, sbt)
     WHERE t.id = u.id AND t.status IS NULL
    RETURNING t.id, t.merchant_account_id, t.payment_method_ids, t.created_at
  ), ${countUses('done')}
  SELECT id FROM done`;

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

/**
 * Every read and write of vault_forward_requests: prepared statements (Sql) for what a forward writes, its
 * disclosure and its outcome, and for the spool's replay; TypeORM for the routes' reads and the body purge.
 * The outcome's statements also count the uses of the forward's cards in payment_methods (countUses): in the
 * statement that sets the outcome, so that a record replayed any number of times counts once.
 */
@Injectable()
export class ForwardRecordsRepository {
  private readonly keyset: KeysetTable<ForwardRecordEntity>;

  constructor(
    private readonly sql: Sql,
    @InjectRepository(ForwardRecordEntity) private readonly records: Repository<ForwardRecordEntity>,
  ) {
    this.keyset = new KeysetTable(sql, records.metadata, 'r');
  }

  /** Disclosures (no outcome yet): a plain VALUES row for one, unnest() for several. */
  async insertPending(pending: ForwardRecord[]): Promise<void> {
    await (pending.length === 1
      ? this.sql.prepared('forwarding.record-one-pending', INSERT_ONE_PENDING, values(pending[0]))
      : this.sql.prepared('forwarding.record-pending', INSERT_PENDING, columns(pending)));
  }

  /** The outcomes of rows disclosed in the table; the ids of the rows it set. */
  async updateOutcomes(known: ForwardRecord[]): Promise<Set<string>> {
    const updated = await this.sql.prepared<{ id: string }>('forwarding.record-outcome', UPDATE_OUTCOME, [
      known.map((r) => r.id),
      known.map((r) => r.status),
      known.map((r) => r.durationMs),
      known.map((r) => r.errorType),
      ...bodyColumns(known),
    ]);
    return new Set(updated.map((row) => row.id));
  }

  /** Whole records with their outcomes, inserted or filling in their pending rows. */
  async upsertFinal(records: ForwardRecord[]): Promise<void> {
    await this.sql.prepared('forwarding.record-final', UPSERT_FINAL, finalColumns(records));
  }

  /** Spooled disclosures or outcomes, as their statement takes them. */
  async writeSpooled(kind: 'pending' | 'final', records: ForwardRecord[]): Promise<void> {
    await (kind === 'final'
      ? this.sql.prepared('forwarding.record-final', UPSERT_FINAL, finalColumns(records))
      : this.sql.prepared('forwarding.record-pending', INSERT_PENDING, columns(records)));
  }

  /** Resolves when the database answers. */
  async probe(): Promise<void> {
    await this.sql.prepared('forwarding.probe', 'SELECT 1', []);
  }

  /** One record, the sealed bodies included. */
  find(merchantAccountId: string, id: string): Promise<ForwardRecordEntity | null> {
    return this.records.findOne({ where: { id, merchantAccountId }, select: DETAIL_COLUMNS });
  }

  activity(merchantAccountId: string, minutes: number, now: Date | null): Promise<ActivityRow[]> {
    return this.records.query(ACTIVITY, [merchantAccountId, minutes, now]);
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  page(merchantAccountId: string, keyset: KeysetRequest): Promise<ForwardRecordEntity[]> {
    return this.keyset.seekPage([where('r.merchant_account_id = ?', merchantAccountId)], keyset);
  }

  /**
   * Nulls the bodies of at most `batch` records created more than `retentionDays` ago, picked with FOR UPDATE
   * SKIP LOCKED; how many.
   */
  async purgeBodies(retentionDays: number, batch: number): Promise<number> {
    const [, updated] = await this.records.query<[unknown[], number]>(
      `UPDATE vault_forward_requests
            SET ciphertext = NULL, wrapped_key = NULL, master_key_id = NULL, request_body_truncated = false,
                response_body_truncated = false
          WHERE id IN (SELECT id FROM vault_forward_requests
                        WHERE wrapped_key IS NOT NULL AND created_at < now() - make_interval(days => $1)
                        LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [retentionDays, batch],
    );
    return updated;
  }
}
