import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0143: values the sealer never writes are refused by the schema, and each merchant has a tree of its own.
 * - Entries: a leaf index is never negative and comes with its leaf hash (the UNIQUE on leaf_index already refuses a
 *   second entry at one leaf); `merchant_leaf_index` is the entry's place in its merchant's tree, set by the sealer
 *   after the shared tree covers the entry, unique per merchant (a partial index: a forward's insert pays nothing).
 * - Heads: `merchant_account_id` NULL is the shared tree, set a merchant's own; seq from 1 in each chain, sizes never
 *   negative, nothing purged beyond the tree.
 * Existing rows that break a rule stop the migration with their ids: they can only come from a hand-made change,
 * which `ledger verify` reports and an operator must judge; nothing here deletes or rewrites ledger rows.
 */
export class LedgerCompleteness1763966500000 implements MigrationInterface {
  name = 'LedgerCompleteness1763966500000';

  async up(q: QueryRunner): Promise<void> {
    const entries = (await q.query(
      `SELECT id::text FROM vault_forward_ledger_entries
        WHERE leaf_index < 0 OR (leaf_index IS NULL) <> (leaf_hash IS NULL) ORDER BY id LIMIT 20`,
    )) as Array<{ id: string }>;
    const heads = (await q.query(
      `SELECT seq::text FROM vault_forward_ledger_heads
        WHERE seq < 1 OR tree_size < 0 OR purged_below < 0 OR purged_below > tree_size ORDER BY seq LIMIT 20`,
    )) as Array<{ seq: string }>;
    if (entries.length > 0 || heads.length > 0)
      throw new Error(
        'The disclosure ledger holds rows its sealer never writes (a negative leaf index, a leaf without its hash, ' +
          `or a head with an impossible seq or size): entries ${entries.map((e) => e.id).join(', ') || '(none)'}; ` +
          `heads ${heads.map((h) => h.seq).join(', ') || '(none)'}. Run \`ledger verify\`, keep its report as evidence, ` +
          'and correct or remove those rows by hand before migrating (decision 0143).',
      );
    await q.query(`ALTER TABLE vault_forward_ledger_entries
      ADD COLUMN merchant_leaf_index bigint NULL,
      ADD CONSTRAINT vault_forward_ledger_entries_leaf_check
        CHECK (leaf_index >= 0 AND (leaf_index IS NULL) = (leaf_hash IS NULL)),
      ADD CONSTRAINT vault_forward_ledger_entries_merchant_leaf_check
        CHECK (merchant_leaf_index >= 0 AND (merchant_leaf_index IS NULL OR leaf_index IS NOT NULL))`);
    await q.query(
      `CREATE UNIQUE INDEX vault_forward_ledger_entries_merchant_leaf_key
         ON vault_forward_ledger_entries (merchant_account_id, merchant_leaf_index) WHERE merchant_leaf_index IS NOT NULL`,
    );
    // What the sealer appends to the merchants' trees next: in the shared tree, not yet in its merchant's.
    await q.query(
      `CREATE INDEX vault_forward_ledger_entries_merchant_unsealed_idx ON vault_forward_ledger_entries (leaf_index)
         WHERE leaf_index IS NOT NULL AND merchant_leaf_index IS NULL`,
    );
    await q.query(`ALTER TABLE vault_forward_ledger_heads
      ADD COLUMN merchant_account_id text NULL,
      ADD CONSTRAINT vault_forward_ledger_heads_values_check
        CHECK (seq >= 1 AND tree_size >= 0 AND purged_below >= 0 AND purged_below <= tree_size),
      DROP CONSTRAINT vault_forward_ledger_heads_seq_key`);
    await q.query(
      `CREATE UNIQUE INDEX vault_forward_ledger_heads_seq_key ON vault_forward_ledger_heads (seq)
         WHERE merchant_account_id IS NULL`,
    );
    await q.query(
      `CREATE UNIQUE INDEX vault_forward_ledger_heads_merchant_seq_key ON vault_forward_ledger_heads
         (merchant_account_id, seq) WHERE merchant_account_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX vault_forward_ledger_heads_merchant_keyset_idx ON vault_forward_ledger_heads
         (merchant_account_id, created_at DESC, id DESC) WHERE merchant_account_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM vault_forward_ledger_heads WHERE merchant_account_id IS NOT NULL`);
    await q.query(`DROP INDEX vault_forward_ledger_heads_merchant_keyset_idx`);
    await q.query(`DROP INDEX vault_forward_ledger_heads_merchant_seq_key`);
    await q.query(`DROP INDEX vault_forward_ledger_heads_seq_key`);
    await q.query(`ALTER TABLE vault_forward_ledger_heads
      DROP CONSTRAINT vault_forward_ledger_heads_values_check,
      DROP COLUMN merchant_account_id,
      ADD CONSTRAINT vault_forward_ledger_heads_seq_key UNIQUE (seq)`);
    await q.query(`DROP INDEX vault_forward_ledger_entries_merchant_unsealed_idx`);
    await q.query(`DROP INDEX vault_forward_ledger_entries_merchant_leaf_key`);
    await q.query(`ALTER TABLE vault_forward_ledger_entries
      DROP CONSTRAINT vault_forward_ledger_entries_merchant_leaf_check,
      DROP CONSTRAINT vault_forward_ledger_entries_leaf_check,
      DROP COLUMN merchant_leaf_index`);
  }
}
