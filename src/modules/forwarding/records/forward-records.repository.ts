import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import type { ForwardRecord } from './forward-record';
import { columns, finalColumns, values } from './forward-record-columns';
import { ForwardRecordEntity } from './forward-record.entity';
import { bodyColumns } from './sealed-bodies';

const COLUMNS =
  `(id, merchant_account_id, config_id, method, target_url, status, duration_ms, payment_method_ids, ` +
  `authentication_ids, error_type, created_at, checkout_session_id, merchant_initiated, api_key_id, filled_fields)`;
/** A batch's rows (forward-record-columns.ts), named as ledgerEntries reads them. */
const ROWS = `SELECT id, merchant, config, method, target, status, duration, pms::uuid[] AS pms, auths::uuid[] AS auths,
         error, coalesce(at, now()) AS at, session, mit, key, fields::text[] AS fields, NULL::bytea AS ct
  FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::int[], $7::float8[], $8::text[], $9::text[],
              $10::text[], $11::timestamptz[], $12::uuid[], $13::bool[], $14::text[], $15::text[])
       AS r(id, merchant, config, method, target, status, duration, pms, auths, error, at, session, mit, key, fields)`;
/**
 * The disclosure ledger's entries (decision 0133) for the rows of `source` (columns named as in ROWS), written in
 * the statement that writes the records, so an entry is exactly as durable as its record, and a replay adds none
 * twice. Only records that name cards, a checkout session or a stored secret are disclosures. `ledger` is the
 * parameter that says whether the ledger is on; the card fingerprints are read from the cards' rows.
 */
const ledgerEntries = (source: string, kind: 'disclosure' | 'outcome', ledger: string) => `INSERT INTO
    vault_forward_ledger_entries (record_id, kind, merchant_account_id, api_key_id, config_id, method, target_origin,
      payment_method_ids, fingerprints, checkout_session_id, authentication_ids, filled_fields, status, error_type,
      bodies_sha256)
    SELECT s.id, '${kind}', s.merchant, s.key, s.config, s.method, substring(s.target from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*'),
           s.pms, coalesce((SELECT array_agg(p.fingerprint ORDER BY u.o)
                              FROM unnest(s.pms) WITH ORDINALITY AS u(id, o)
                              JOIN payment_methods p ON p.id = u.id AND p.merchant_account_id = s.merchant), '{}'),
           s.session, s.auths, s.fields, ${kind === 'outcome' ? "s.status, s.error, encode(sha256(s.ct), 'base64')" : 'NULL, NULL, NULL'}
      FROM ${source} s
     WHERE ${ledger} AND (cardinality(s.pms) > 0 OR s.session IS NOT NULL OR cardinality(s.auths) > 0)
    ON CONFLICT (record_id, kind) DO NOTHING`;
/**
 * The outcome's columns: the disclosure's and the redacted bodies (decision 0104), which only the outcome carries,
 * with the days they are kept (decision 0138).
 */
const FINAL_COLUMNS =
  `${COLUMNS.slice(0, -1)}, ciphertext, wrapped_key, master_key_id, request_body_truncated, ` +
  `response_body_truncated, bodies_retention_days)`;
const RECORD_FIELDS =
  'id, merchant, config, method, target, status, duration, pms, auths, error, at, session, mit, key, fields';
const SET_BODIES =
  `ciphertext = EXCLUDED.ciphertext, wrapped_key = EXCLUDED.wrapped_key, master_key_id = EXCLUDED.master_key_id, ` +
  `request_body_truncated = EXCLUDED.request_body_truncated, response_body_truncated = EXCLUDED.response_body_truncated, ` +
  `bodies_retention_days = EXCLUDED.bodies_retention_days`;
/**
 * A disclosure: who sent what where, with no outcome yet (status NULL), and its ledger entry. Replaying it again
 * changes nothing. $16: the ledger is on.
 */
const INSERT_PENDING = `WITH r AS (${ROWS}), recorded AS (
    INSERT INTO vault_forward_requests ${COLUMNS} SELECT ${RECORD_FIELDS} FROM r ON CONFLICT (id) DO NOTHING
  )
  ${ledgerEntries('r', 'disclosure', '$16::bool')}`;
/**
 * INSERT_PENDING for a batch of one, the usual case at low load: one row of scalars, which PostgreSQL
 * plans and runs without unnest's array parameters to parse and expand (docs/benchmarks.md measures
 * both). Same parameters, one value each; same effect.
 */
const INSERT_ONE_PENDING = `WITH r AS (
    SELECT $1::text AS id, $2::text AS merchant, $3::uuid AS config, $4::text AS method, $5::text AS target,
           $6::int AS status, $7::float8 AS duration, $8::text::uuid[] AS pms, $9::text::uuid[] AS auths,
           $10::text AS error, coalesce($11::timestamptz, now()) AS at, $12::uuid AS session, $13::bool AS mit,
           $14::text AS key, $15::text::text[] AS fields, NULL::bytea AS ct
  ), recorded AS (
    INSERT INTO vault_forward_requests ${COLUMNS} SELECT ${RECORD_FIELDS} FROM r ON CONFLICT (id) DO NOTHING
  )
  ${ledgerEntries('r', 'disclosure', '$16::bool')}`;
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
 * spool can replay either after the other, any number of times. $16 says which records released
 * card data (their uses are counted, their disclosure entries written if the disclosure's own statement has
 * not); a refused forward names its cards too but sent nothing. Each outcome set writes its ledger entry. $23:
 * the ledger is on.
 */
const UPSERT_FINAL = `WITH r AS (
    SELECT id, merchant, config, method, target, status, duration, pms::uuid[] AS pms, auths::uuid[] AS auths, error,
           coalesce(at, now()) AS at, session, mit, key, fields::text[] AS fields, disclosed, decode(ct, 'base64') AS ct,
           decode(wk, 'base64') AS wk, mk, coalesce(rbt, false) AS rbt, coalesce(sbt, false) AS sbt, rd
      FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::int[], $7::float8[], $8::text[], $9::text[],
                  $10::text[], $11::timestamptz[], $12::uuid[], $13::bool[], $14::text[], $15::text[], $16::bool[],
                  $17::text[], $18::text[], $19::text[], $20::bool[], $21::bool[], $22::int[])
           AS r(id, merchant, config, method, target, status, duration, pms, auths, error, at, session, mit, key, fields,
                disclosed, ct, wk, mk, rbt, sbt, rd)
  ), done AS (
    INSERT INTO vault_forward_requests ${FINAL_COLUMNS}
    SELECT ${RECORD_FIELDS}, ct, wk, mk, rbt, sbt, rd
      FROM r
    ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, duration_ms = EXCLUDED.duration_ms, error_type = EXCLUDED.error_type,
      ${SET_BODIES}
    WHERE vault_forward_requests.status IS NULL
    RETURNING id, merchant_account_id, payment_method_ids, created_at
  ), released AS (
    SELECT done.* FROM done JOIN r ON r.id = done.id WHERE r.disclosed
  ), disclosures AS (
    ${ledgerEntries('(SELECT * FROM r WHERE r.disclosed)', 'disclosure', '$23::bool')}
  ), outcomes AS (
    ${ledgerEntries('(SELECT r.* FROM r JOIN done ON done.id = r.id)', 'outcome', '$23::bool')}
  ), ${countUses('released')}
  SELECT count(*)::int AS written FROM done`;
/**
 * The outcome of disclosures committed by this process: a plain UPDATE of known rows is cheaper than
 * the upsert's speculative insert. A row it does not find (not expected) goes through UPSERT_FINAL.
 * Every row here released card data, so each one it sets counts its cards' uses; each writes its outcome's
 * ledger entry. $11: the ledger is on.
 */
const UPDATE_OUTCOME = `WITH done AS (
    UPDATE vault_forward_requests AS t SET status = u.status, duration_ms = u.duration, error_type = u.error,
           ciphertext = decode(u.ct, 'base64'), wrapped_key = decode(u.wk, 'base64'), master_key_id = u.mk,
           request_body_truncated = coalesce(u.rbt, false), response_body_truncated = coalesce(u.sbt, false),
           bodies_retention_days = u.rd
      FROM unnest($1::text[], $2::int[], $3::float8[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::bool[],
                  $10::int[])
           AS u(id, status, duration, error, ct, wk, mk, rbt, sbt, rd)
     WHERE t.id = u.id AND t.status IS NULL
    RETURNING t.id, t.merchant_account_id, t.payment_method_ids, t.created_at, t.merchant_account_id AS merchant,
              t.api_key_id AS key, t.config_id AS config, t.method, t.target_url AS target, t.payment_method_ids AS pms,
              t.checkout_session_id AS session, t.authentication_ids AS auths, t.filled_fields AS fields, t.status,
              t.error_type AS error, t.ciphertext AS ct
  ), outcomes AS (
    ${ledgerEntries('done', 'outcome', '$11::bool')}
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
  bodiesRetentionDays: true,
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
  /** Whether the statements write ledger entries (a parameter of each, so one statement text either way). */
  private readonly ledger: boolean;

  constructor(
    private readonly sql: Sql,
    @InjectRepository(ForwardRecordEntity) private readonly records: Repository<ForwardRecordEntity>,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'ledger'>,
  ) {
    this.keyset = new KeysetTable(sql, records.metadata, 'r');
    this.ledger = config.ledger.enabled;
  }

  /** Disclosures (no outcome yet): a plain VALUES row for one, unnest() for several. */
  async insertPending(pending: ForwardRecord[]): Promise<void> {
    await (pending.length === 1
      ? this.sql.prepared('forwarding.record-one-pending', INSERT_ONE_PENDING, [...values(pending[0]), this.ledger])
      : this.sql.prepared('forwarding.record-pending', INSERT_PENDING, [...columns(pending), this.ledger]));
  }

  /** The outcomes of rows disclosed in the table; the ids of the rows it set. */
  async updateOutcomes(known: ForwardRecord[]): Promise<Set<string>> {
    const updated = await this.sql.prepared<{ id: string }>('forwarding.record-outcome', UPDATE_OUTCOME, [
      known.map((r) => r.id),
      known.map((r) => r.status),
      known.map((r) => r.durationMs),
      known.map((r) => r.errorType),
      ...bodyColumns(known),
      this.ledger,
    ]);
    return new Set(updated.map((row) => row.id));
  }

  /** Whole records with their outcomes, inserted or filling in their pending rows. */
  async upsertFinal(records: ForwardRecord[]): Promise<void> {
    await this.sql.prepared('forwarding.record-final', UPSERT_FINAL, [...finalColumns(records), this.ledger]);
  }

  /** Spooled disclosures or outcomes, as their statement takes them. */
  async writeSpooled(kind: 'pending' | 'final', records: ForwardRecord[]): Promise<void> {
    await (kind === 'final'
      ? this.upsertFinal(records)
      : this.sql.prepared('forwarding.record-pending', INSERT_PENDING, [...columns(records), this.ledger]));
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
   * Nulls the bodies of at most `batch` records past their retention at `now` (null: the database's clock), picked
   * with FOR UPDATE SKIP LOCKED; how many. A record's retention is its own `bodies_retention_days` (decision 0138),
   * never more than `ceilingDays` (the operator's FORWARD_RECORD_BODY_RETENTION_DAYS, at most 30); bodies without
   * one (recorded before decision 0138, which no config asked for) are past it at once. The partial index on
   * created_at holds only the rows with bodies; `created_at < now` bounds its range.
   */
  async purgeBodies(now: Date | null, ceilingDays: number, batch: number): Promise<number> {
    const [, updated] = await this.records.query<[unknown[], number]>(
      `UPDATE vault_forward_requests
            SET ciphertext = NULL, wrapped_key = NULL, master_key_id = NULL, request_body_truncated = false,
                response_body_truncated = false
          WHERE id IN (SELECT id FROM vault_forward_requests
                        WHERE wrapped_key IS NOT NULL AND created_at < coalesce($1::timestamptz, now())
                          AND created_at < coalesce($1::timestamptz, now())
                                           - make_interval(days => least(coalesce(bodies_retention_days, 0), $2::int))
                        LIMIT $3 FOR UPDATE SKIP LOCKED)`,
      [now, ceilingDays, batch],
    );
    return updated;
  }
}
