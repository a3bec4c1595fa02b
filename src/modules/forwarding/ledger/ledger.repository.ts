import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable } from '../../../platform/pagination/keyset';
import type { LedgerEntryDocument, LedgerHeadDocument } from './ledger-documents';
import { LedgerHeadEntity } from './ledger-head.entity';

/** The sealer's advisory lock: one seal or purge at a time across every process; forwards never take it. */
const SEALER_LOCK = 7_236_001;

/** An entry as its document, every column formatted as the document carries it (order by e.*: id is text here). */
const ENTRY = `SELECT id::text, record_id, kind, merchant_account_id, api_key_id, config_id::text, method, target_origin,
    payment_method_ids::text[] AS payment_method_ids, fingerprints, checkout_session_id::text,
    authentication_ids::text[] AS authentication_ids, filled_fields, status, error_type, bodies_sha256,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at,
    leaf_index::float8 AS leaf_index, leaf_hash
  FROM vault_forward_ledger_entries e`;
const HEAD = `SELECT seq::float8 AS seq, kind, tree_size::float8 AS tree_size, root_hash, previous_hash, frontier,
    purged_below::float8 AS purged_below, retained, signed_at, key_id, signature
  FROM vault_forward_ledger_heads`;

/** What a seal writes: the leaf hash of each entry it was given, in order, and the head that covers them. */
interface SealWrite {
  leafHashes: string[];
  head: LedgerHeadDocument;
}

/**
 * Every read and write of the ledger's two tables (decision 0133). Entries are written by the records' own
 * statements (forward-records.repository.ts); here they are sealed, read and purged. A seal and a purge run in
 * one transaction under SEALER_LOCK, taken with pg_try: a process that finds it held leaves the work to the holder.
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
   * in the same transaction. 'busy' when another process holds the sealer's lock.
   */
  seal(
    limit: number,
    build: (latest: LedgerHeadDocument | null, entries: LedgerEntryDocument[]) => SealWrite | null,
  ): Promise<LedgerHeadDocument | null | 'busy'> {
    return this.locked(async (m) => {
      const latest = await this.latestIn(m);
      const entries = await m.query<LedgerEntryDocument[]>(
        `${ENTRY} WHERE e.leaf_index IS NULL ORDER BY e.id LIMIT $1`,
        [limit],
      );
      const write = build(latest, entries);
      if (!write) return null;
      const first = latest?.tree_size ?? 0;
      await m.query(
        `UPDATE vault_forward_ledger_entries e SET leaf_index = u.leaf, leaf_hash = u.hash
           FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS u(id, leaf, hash) WHERE e.id = u.id`,
        [entries.map((e) => e.id), entries.map((_, i) => first + i), write.leafHashes],
      );
      await this.insertHead(m, write.head);
      return write.head;
    });
  }

  /**
   * The retention purge: `build` gets the latest head and the leaf hashes from its purged_below to the first
   * entry created at or after `cutoff` (the new purged_below), and returns the purge head; those entries are
   * deleted in the same transaction. Null when nothing is due.
   */
  purge(
    cutoff: Date,
    build: (latest: LedgerHeadDocument, below: number, leafHashes: string[]) => LedgerHeadDocument,
  ): Promise<LedgerHeadDocument | null | 'busy'> {
    return this.locked(async (m) => {
      const latest = await this.latestIn(m);
      if (!latest) return null;
      const [{ below }] = await m.query<Array<{ below: number }>>(
        `SELECT coalesce(min(leaf_index), $2)::float8 AS below FROM vault_forward_ledger_entries
          WHERE leaf_index IS NOT NULL AND leaf_index < $2 AND created_at >= $1`,
        [cutoff, latest.tree_size],
      );
      if (below <= latest.purged_below) return null;
      const leaves = await m.query<Array<{ leaf_hash: string }>>(
        `SELECT leaf_hash FROM vault_forward_ledger_entries WHERE leaf_index >= $1 AND leaf_index < $2 ORDER BY leaf_index`,
        [latest.purged_below, below],
      );
      const head = build(
        latest,
        below,
        leaves.map((l) => l.leaf_hash),
      );
      await m.query(`DELETE FROM vault_forward_ledger_entries WHERE leaf_index < $1`, [below]);
      await this.insertHead(m, head);
      return head;
    });
  }

  latestHead(): Promise<LedgerHeadDocument | null> {
    return this.latestIn(this.dataSource.manager);
  }

  async headBySeq(seq: number): Promise<LedgerHeadDocument | null> {
    const rows = await this.dataSource.query<LedgerHeadDocument[]>(`${HEAD} WHERE seq = $1`, [seq]);
    return rows[0] ?? null;
  }

  /** Heads in seq order from `afterSeq`, at most `limit`. */
  headsAfter(afterSeq: number, limit: number): Promise<LedgerHeadDocument[]> {
    return this.dataSource.query(`${HEAD} WHERE seq > $1 ORDER BY seq LIMIT $2`, [afterSeq, limit]);
  }

  /** One page of heads, newest first, as `KeysetTable.seekPage` fetches it. */
  page(keyset: KeysetRequest): Promise<LedgerHeadEntity[]> {
    return this.keyset.seekPage([], keyset);
  }

  /** A record's entries (disclosure, outcome), sealed or not. */
  entriesOfRecord(merchantAccountId: string, recordId: string): Promise<LedgerEntryDocument[]> {
    return this.dataSource.query(`${ENTRY} WHERE e.merchant_account_id = $1 AND e.record_id = $2 ORDER BY e.id`, [
      merchantAccountId,
      recordId,
    ]);
  }

  /** Leaf hashes of [from, to), in leaf order (a missing leaf is simply not there). */
  async leafHashes(from: number, to: number): Promise<Array<{ leaf_index: number; leaf_hash: string }>> {
    return this.dataSource.query(
      `SELECT leaf_index::float8 AS leaf_index, leaf_hash FROM vault_forward_ledger_entries
        WHERE leaf_index >= $1 AND leaf_index < $2 ORDER BY leaf_index`,
      [from, to],
    );
  }

  /**
   * Entries with a leaf index above `afterLeaf` and below `below`, in leaf order, at most `limit`: what a verifier or
   * an export reads.
   */
  sealedEntries(afterLeaf: number, limit: number, below = Number.MAX_SAFE_INTEGER): Promise<LedgerEntryDocument[]> {
    return this.dataSource.query(
      `${ENTRY} WHERE e.leaf_index > $1 AND e.leaf_index < $3 ORDER BY e.leaf_index LIMIT $2`,
      [afterLeaf, limit, below],
    );
  }

  private async latestIn(m: EntityManager): Promise<LedgerHeadDocument | null> {
    const rows = await m.query<LedgerHeadDocument[]>(`${HEAD} ORDER BY seq DESC LIMIT 1`);
    return rows[0] ?? null;
  }

  private async insertHead(m: EntityManager, h: LedgerHeadDocument): Promise<void> {
    await m.query(
      `INSERT INTO vault_forward_ledger_heads (seq, kind, tree_size, root_hash, previous_hash, frontier, purged_below,
         retained, signed_at, key_id, signature)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
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
