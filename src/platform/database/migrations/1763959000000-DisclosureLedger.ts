import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0133: the disclosure ledger. Hashes and signatures are base64 text, as the documents carry them; a
 * head's columns are the document it signed (signed_at as signed), and it is listed by (created_at, id) as every
 * paged table is. Entries are metadata only (no card number, no body: the bodies' hash), one
 * per record and kind, written by the record's own statements; `leaf_index` and `leaf_hash` are set by the sealer in
 * the transaction that writes the head covering them. No foreign keys: the ledger outlives what it describes (a
 * merchant, a card or a record deleted). The records gain the API key that sent them and the placeholders filled.
 */
export class DisclosureLedger1763959000000 implements MigrationInterface {
  name = 'DisclosureLedger1763959000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_requests
      ADD COLUMN api_key_id text NULL,
      ADD COLUMN filled_fields text[] NOT NULL DEFAULT '{}'`);
    await q.query(`
      CREATE TABLE vault_forward_ledger_entries (
        id                  bigserial PRIMARY KEY,
        record_id           text NOT NULL,
        kind                text NOT NULL CHECK (kind IN ('disclosure', 'outcome')),
        merchant_account_id text NOT NULL,
        api_key_id          text NULL,
        config_id           uuid NULL,
        method              text NULL,
        target_origin       text NULL,
        payment_method_ids  uuid[] NOT NULL,
        fingerprints        text[] NOT NULL,
        checkout_session_id uuid NULL,
        authentication_ids  uuid[] NOT NULL,
        filled_fields       text[] NOT NULL,
        status              integer NULL,
        error_type          text NULL,
        bodies_sha256       text NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        leaf_index          bigint NULL UNIQUE,
        leaf_hash           text NULL,
        UNIQUE (record_id, kind)
      )`);
    // Indexes cost every forward (two entries each): the sealer's partial index, and the record's (the UNIQUE above)
    // for the proof route; a verification or an export reads the table whole, in leaf order (leaf_index's UNIQUE).
    await q.query(
      `CREATE INDEX vault_forward_ledger_entries_unsealed_idx ON vault_forward_ledger_entries (id) WHERE leaf_index IS NULL`,
    );
    await q.query(`
      CREATE TABLE vault_forward_ledger_heads (
        id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq            bigint NOT NULL UNIQUE,
        kind           text NOT NULL CHECK (kind IN ('seal', 'purge')),
        tree_size      bigint NOT NULL,
        root_hash      text NOT NULL,
        previous_hash  text NULL,
        frontier       text[] NOT NULL,
        purged_below   bigint NOT NULL DEFAULT 0,
        retained       text[] NOT NULL DEFAULT '{}',
        signed_at      text NOT NULL,
        key_id         text NOT NULL,
        signature      text NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX vault_forward_ledger_heads_keyset_idx ON vault_forward_ledger_heads (created_at DESC, id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE vault_forward_ledger_heads`);
    await q.query(`DROP TABLE vault_forward_ledger_entries`);
    await q.query(`ALTER TABLE vault_forward_requests DROP COLUMN filled_fields, DROP COLUMN api_key_id`);
  }
}
