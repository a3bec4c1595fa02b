import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import type { LedgerEntryDocument, LedgerHeadDocument } from './ledger-documents';
import { LedgerHeadEntity } from './ledger-head.entity';

/** The sealer's advisory lock: one seal or purge at a time across every process; forwards never take it. */
const SEALER_LOCK = 7_236_001;

/** An entry as its document, every column formatted as the document carries it (order by e.*: id is text here). */
const ENTRY = `SELECT id::text, record_id, kind, merchant_account_id, api_key_id, config_id::text, method, target_origin,
    payment_method_ids::text[] AS payment_method_ids, fingerprints, checkout_session_id::text,
    authentication_ids::text[] AS authentication_ids, filled_fields, status, error_type, bodies_sha256,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at,
    leaf_index::float8 AS leaf_index, leaf_hash, merchant_leaf_index::float8 AS merchant_leaf_index
  FROM vault_forward_ledger_entries e`;
const HEAD_FIELDS = `seq::float8 AS seq, kind, tree_size::float8 AS tree_size, root_hash, previous_hash, frontier,
    purged_below::float8 AS purged_below, retained, signed_at, key_id, signature`;
/** The shared tree's heads. */
const HEAD = `SELECT ${HEAD_FIELDS} FROM vault_forward_ledger_heads WHERE merchant_account_id IS NULL`;
/** A merchant's own heads ($1: the merchant). */
const MERCHANT_HEAD = `SELECT merchant_account_id, ${HEAD_FIELDS} FROM vault_forward_ledger_heads
  WHERE merchant_account_id = $1`;
/** The records that name cards, a checkout session or a stored secret: the ones the ledger has entries for. */
const DISCLOSING = `(cardinality(r.payment_method_ids) > 0 OR r.checkout_session_id IS NOT NULL
    OR cardinality(r.authentication_ids) > 0)`;

/** What a seal writes: the leaf hash of each entry it was given, in order, and the head that covers them. */
interface SealWrite {
  leafHashes: string[];
  head: LedgerHeadDocument;
}

/** An entry the purge deletes: its hash and its place in its merchant's tree. */
interface PurgedLeaf {
  merchant_account_id: string;
  leaf_hash: string;
  merchant_leaf_index: number;
}

/** A merchant's next head and the entries (ids, in order) it appends to that merchant's tree. */
interface MerchantWrite {
  head: LedgerHeadDocument;
  ids: string[];
}

/** A finding of `ledger verify` about a record or an entry that the other is missing for (decision 0143). */
interface CompletenessRow {
  record_id: string;
  merchant_account_id: string;
  /** The entry without its record; null for a record without its entry. */
  entry_id: string | null;
  leaf_index: number | null;
  /** For a record: the entry kind it lacks. */
  kind: string;
}

/**
 * Every read and write of the ledger's two tables (decisions 0133, 0143). Entries are written by the records' own
 * statements (forward-records.repository.ts); here they are sealed, read and purged. A seal and a purge run in
 * one transaction under SEALER_LOCK, taken with pg_try: a process that finds it held leaves the work to the holder.
 * `ledger verify`'s completeness reads join the records table (vault_forward_requests), read only: one anti-join
 * each way, which neither table's repository could run alone.
 */
@Injectable()
export class LedgerRepository {
  private readonly keyset: KeysetTable<LedgerHeadEntity>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(LedgerHeadEntity) heads: Repository<LedgerHeadEntity>,
    sql: Sql,
  ) {
    this.keyset = new KeysetTable(sql, heads.metadata, 'h');
  }

  /**
   * Up to `limit` unsealed entries (in id order) and the latest head, given to `build`; what it returns is written
   * in the same transaction. Then up to `limit` entries the shared tree covers and their merchants' trees do not,
   * with each of those merchants' latest head, given to `grow`: the merchants' heads it returns are written too, each
   * over the entries it names. `more` when a full batch was sealed; 'busy' when another process holds the lock.
   */
  seal(
    limit: number,
    build: (latest: LedgerHeadDocument | null, entries: LedgerEntryDocument[]) => SealWrite | null,
    grow: (latest: Map<string, LedgerHeadDocument>, entries: LedgerEntryDocument[]) => MerchantWrite[],
  ): Promise<{ head: LedgerHeadDocument | null; more: boolean } | 'busy'> {
    return this.locked(async (m) => {
      const latest = await this.latestIn(m);
      const entries = await m.query<LedgerEntryDocument[]>(
        `${ENTRY} WHERE e.leaf_index IS NULL ORDER BY e.id LIMIT $1`,
        [limit],
      );
      const write = build(latest, entries);
      if (write) {
        const first = latest?.tree_size ?? 0;
        await m.query(
          `UPDATE vault_forward_ledger_entries e SET leaf_index = u.leaf, leaf_hash = u.hash
             FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS u(id, leaf, hash) WHERE e.id = u.id`,
          [entries.map((e) => e.id), entries.map((_, i) => first + i), write.leafHashes],
        );
        await this.insertHead(m, write.head);
      }
      const covered = (write?.head ?? latest)?.tree_size ?? 0;
      const leaves = await m.query<LedgerEntryDocument[]>(
        `${ENTRY} WHERE e.leaf_index IS NOT NULL AND e.merchant_leaf_index IS NULL AND e.leaf_index >= 0
            AND e.leaf_index < $1 ORDER BY e.leaf_index, e.id LIMIT $2`,
        [covered, limit],
      );
      const writes = leaves.length > 0 ? grow(await this.latestOfMerchants(m, leaves), leaves) : [];
      if (writes.length > 0) {
        const ids = writes.flatMap((w) => w.ids);
        const indexes = writes.flatMap((w) => w.ids.map((_, i) => w.head.tree_size - w.ids.length + i));
        await m.query(
          `UPDATE vault_forward_ledger_entries e SET merchant_leaf_index = u.leaf
             FROM unnest($1::bigint[], $2::bigint[]) AS u(id, leaf) WHERE e.id = u.id`,
          [ids, indexes],
        );
        for (const w of writes) await this.insertHead(m, w.head);
      }
      const grown = writes.reduce((n, w) => n + w.ids.length, 0);
      return { head: write?.head ?? null, more: entries.length === limit || grown === limit };
    });
  }

  /**
   * The retention purge: `build` gets the latest head and the leaf hashes from its purged_below to the first
   * entry created at or after `cutoff` (the new purged_below), and returns the purge head; those entries are
   * deleted in the same transaction. Each merchant whose entries go gets a purge head of its own tree the same
   * way, so a purge stops before the first entry not in its merchant's tree yet. Null when nothing is due.
   */
  purge(
    cutoff: Date,
    build: (latest: LedgerHeadDocument, below: number, leafHashes: string[]) => LedgerHeadDocument,
  ): Promise<LedgerHeadDocument | null | 'busy'> {
    return this.locked(async (m) => {
      const latest = await this.latestIn(m);
      if (!latest) return null;
      const [{ below }] = await m.query<Array<{ below: number }>>(
        `SELECT least(
           coalesce((SELECT min(leaf_index) FROM vault_forward_ledger_entries
                      WHERE leaf_index IS NOT NULL AND leaf_index < $2 AND created_at >= $1), $2),
           coalesce((SELECT min(leaf_index) FROM vault_forward_ledger_entries
                      WHERE leaf_index IS NOT NULL AND merchant_leaf_index IS NULL), $2))::float8 AS below`,
        [cutoff, latest.tree_size],
      );
      if (below <= latest.purged_below) return null;
      const leaves = await m.query<PurgedLeaf[]>(
        `SELECT merchant_account_id, leaf_hash, merchant_leaf_index::float8 AS merchant_leaf_index
           FROM vault_forward_ledger_entries WHERE leaf_index >= $1 AND leaf_index < $2 ORDER BY leaf_index`,
        [latest.purged_below, below],
      );
      const head = build(
        latest,
        below,
        leaves.map((l) => l.leaf_hash),
      );
      const merchants = await this.latestOfMerchants(m, leaves);
      if (merchants.size !== new Set(leaves.map((l) => l.merchant_account_id)).size)
        throw new Error('ledger purge: a merchant with entries to purge has no head of its own');
      const merchantHeads = [...merchants].map(([merchant, own]) => {
        const mine = leaves.filter((l) => l.merchant_account_id === merchant);
        return build(
          own,
          mine[mine.length - 1].merchant_leaf_index + 1,
          mine.map((l) => l.leaf_hash),
        );
      });
      await m.query(`DELETE FROM vault_forward_ledger_entries WHERE leaf_index < $1`, [below]);
      await this.insertHead(m, head);
      for (const own of merchantHeads) await this.insertHead(m, own);
      return head;
    });
  }

  latestHead(): Promise<LedgerHeadDocument | null> {
    return this.latestIn(this.dataSource.manager);
  }

  async latestMerchantHead(merchant: string): Promise<LedgerHeadDocument | null> {
    const rows = await this.dataSource.query<LedgerHeadDocument[]>(`${MERCHANT_HEAD} ORDER BY seq DESC LIMIT 1`, [
      merchant,
    ]);
    return rows[0] ?? null;
  }

  /** A head of the merchant's own tree. */
  async merchantHeadBySeq(merchant: string, seq: number): Promise<LedgerHeadDocument | null> {
    const rows = await this.dataSource.query<LedgerHeadDocument[]>(`${MERCHANT_HEAD} AND seq = $2`, [merchant, seq]);
    return rows[0] ?? null;
  }

  /** Heads of the shared tree (merchant null) or of a merchant's, in seq order from `afterSeq`, at most `limit`. */
  headsAfter(afterSeq: number, limit: number, merchant: string | null = null): Promise<LedgerHeadDocument[]> {
    return merchant === null
      ? this.dataSource.query(`${HEAD} AND seq > $1 ORDER BY seq LIMIT $2`, [afterSeq, limit])
      : this.dataSource.query(`${MERCHANT_HEAD} AND seq > $2 ORDER BY seq LIMIT $3`, [merchant, afterSeq, limit]);
  }

  /** One page of the merchant's own heads, newest first, as `KeysetTable.seekPage` fetches it. */
  page(merchant: string, keyset: KeysetRequest): Promise<LedgerHeadEntity[]> {
    return this.keyset.seekPage([where('h.merchant_account_id = ?', merchant)], keyset);
  }

  /** A record's entries (disclosure, outcome), sealed or not. */
  entriesOfRecord(merchantAccountId: string, recordId: string): Promise<LedgerEntryDocument[]> {
    return this.dataSource.query(`${ENTRY} WHERE e.merchant_account_id = $1 AND e.record_id = $2 ORDER BY e.id`, [
      merchantAccountId,
      recordId,
    ]);
  }

  /** Leaf hashes of [from, to) of the merchant's tree, in its order (a missing leaf is simply not there). */
  merchantLeafHashes(merchant: string, from: number, to: number): Promise<Array<{ index: number; leaf_hash: string }>> {
    return this.dataSource.query(
      `SELECT merchant_leaf_index::float8 AS index, leaf_hash FROM vault_forward_ledger_entries
        WHERE merchant_account_id = $1 AND merchant_leaf_index >= $2 AND merchant_leaf_index < $3
        ORDER BY merchant_leaf_index`,
      [merchant, from, to],
    );
  }

  /**
   * Entries with a leaf index above `afterLeaf` and below `below`, in leaf order, at most `limit`: what a verifier or
   * an export reads. With `merchant`, that merchant's entries by their place in its own tree instead.
   */
  sealedEntries(
    afterLeaf: number,
    limit: number,
    below = Number.MAX_SAFE_INTEGER,
    merchant: string | null = null,
  ): Promise<LedgerEntryDocument[]> {
    return merchant === null
      ? this.dataSource.query(
          `${ENTRY} WHERE e.leaf_index > $1 AND e.leaf_index < $3 ORDER BY e.leaf_index, e.id LIMIT $2`,
          [afterLeaf, limit, below],
        )
      : this.dataSource.query(
          `${ENTRY} WHERE e.merchant_account_id = $4 AND e.merchant_leaf_index > $1 AND e.merchant_leaf_index < $3
            ORDER BY e.merchant_leaf_index, e.id LIMIT $2`,
          [afterLeaf, limit, below, merchant],
        );
  }

  /** Entries the sealer could never have written: a negative leaf index, or a leaf without its hash or the reverse. */
  impossibleEntries(limit: number): Promise<LedgerEntryDocument[]> {
    return this.dataSource.query(
      `${ENTRY} WHERE e.leaf_index < 0 OR e.merchant_leaf_index < 0 OR (e.leaf_index IS NULL) <> (e.leaf_hash IS NULL)
        ORDER BY e.id LIMIT $1`,
      [limit],
    );
  }

  /** Every merchant with a tree of its own: with heads, or with entries placed in one. */
  async merchantsWithTrees(): Promise<string[]> {
    const rows = await this.dataSource.query<Array<{ merchant: string }>>(
      `SELECT merchant_account_id AS merchant FROM vault_forward_ledger_heads WHERE merchant_account_id IS NOT NULL
       UNION SELECT merchant_account_id FROM vault_forward_ledger_entries WHERE merchant_leaf_index IS NOT NULL
       ORDER BY 1`,
    );
    return rows.map((row) => row.merchant);
  }

  /**
   * Records created at or after `from` that name cards, a checkout session or a stored secret and lack the entry
   * they must have: a disclosure while pending, an outcome once it has one. The entry is written by the statement
   * that writes the record or its outcome, so no record is ever seen without it, however recent.
   */
  recordsWithoutEntry(from: Date | null, merchant: string | null, limit: number): Promise<CompletenessRow[]> {
    return this.dataSource.query(
      `SELECT r.id AS record_id, r.merchant_account_id, NULL AS entry_id, NULL::float8 AS leaf_index, x.kind
         FROM vault_forward_requests r
         CROSS JOIN LATERAL (SELECT CASE WHEN r.status IS NULL AND r.error_type IS NULL THEN 'disclosure'
                                         ELSE 'outcome' END AS kind) x
        WHERE ${DISCLOSING} AND r.created_at >= coalesce($1::timestamptz, '-infinity')
          AND ($2::text IS NULL OR r.merchant_account_id = $2)
          AND NOT EXISTS (SELECT 1 FROM vault_forward_ledger_entries e WHERE e.record_id = r.id AND e.kind = x.kind)
        ORDER BY r.created_at, r.id LIMIT $3`,
      [from, merchant, limit],
    );
  }

  /** Entries (created at or after `from`) whose record, of the same merchant, is not in the records table. */
  entriesWithoutRecord(from: Date | null, merchant: string | null, limit: number): Promise<CompletenessRow[]> {
    return this.dataSource.query(
      `SELECT e.record_id, e.merchant_account_id, e.id::text AS entry_id, e.leaf_index::float8 AS leaf_index, e.kind
         FROM vault_forward_ledger_entries e
        WHERE e.created_at >= coalesce($1::timestamptz, '-infinity') AND ($2::text IS NULL OR e.merchant_account_id = $2)
          AND NOT EXISTS (SELECT 1 FROM vault_forward_requests r
                           WHERE r.id = e.record_id AND r.merchant_account_id = e.merchant_account_id)
        ORDER BY e.id LIMIT $3`,
      [from, merchant, limit],
    );
  }

  private async latestIn(m: EntityManager): Promise<LedgerHeadDocument | null> {
    const rows = await m.query<LedgerHeadDocument[]>(`${HEAD} ORDER BY seq DESC LIMIT 1`);
    return rows[0] ?? null;
  }

  /** The latest head of each merchant the leaves belong to (none yet: not in the map). */
  private async latestOfMerchants(
    m: EntityManager,
    leaves: Array<{ merchant_account_id: string }>,
  ): Promise<Map<string, LedgerHeadDocument>> {
    const merchants = [...new Set(leaves.map((leaf) => leaf.merchant_account_id))];
    const rows = await m.query<LedgerHeadDocument[]>(
      `SELECT DISTINCT ON (merchant_account_id) merchant_account_id, ${HEAD_FIELDS} FROM vault_forward_ledger_heads
        WHERE merchant_account_id = ANY($1::text[]) ORDER BY merchant_account_id, seq DESC`,
      [merchants],
    );
    return new Map(rows.map((row) => [row.merchant_account_id!, row]));
  }

  private async insertHead(m: EntityManager, h: LedgerHeadDocument): Promise<void> {
    await m.query(
      `INSERT INTO vault_forward_ledger_heads (seq, kind, tree_size, root_hash, previous_hash, frontier, purged_below,
         retained, signed_at, key_id, signature, merchant_account_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        h.seq,
        h.kind,
        h.tree_size,
        h.root_hash,
        h.previous_hash,
        h.frontier,
        h.purged_below,
        h.retained,
        h.signed_at,
        h.key_id,
        h.signature,
        h.merchant_account_id ?? null,
      ],
    );
  }

  private locked<T>(work: (m: EntityManager) => Promise<T>): Promise<T | 'busy'> {
    return this.dataSource.transaction(async (m) => {
      const [{ locked }] = await m.query<Array<{ locked: boolean }>>('SELECT pg_try_advisory_xact_lock($1) AS locked', [
        SEALER_LOCK,
      ]);
      return locked ? work(m) : 'busy';
    });
  }
}
