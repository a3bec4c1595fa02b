import { MigrationInterface, QueryRunner } from 'typeorm';

export class Buyers1763892000000 implements MigrationInterface {
  name = 'Buyers1763892000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE buyers (
        id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        merchant_account_id text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        display_name        text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 200),
        external_identifier text NULL CHECK (char_length(external_identifier) BETWEEN 1 AND 200),
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now()
      )`);
    // The keyset order of every list: merchant first, then (created_at, id) newest first.
    await q.query(`CREATE INDEX buyers_keyset_idx ON buyers (merchant_account_id, created_at DESC, id DESC)`);
    await q.query(
      `CREATE UNIQUE INDEX buyers_external_identifier_key ON buyers (merchant_account_id, external_identifier) ` +
        `WHERE external_identifier IS NOT NULL`,
    );
    // Same order for the merchant-account list (instance keys), which uses the shared pagination too.
    await q.query(`CREATE INDEX merchant_accounts_keyset_idx ON merchant_accounts (created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX merchant_accounts_keyset_idx`);
    await q.query(`DROP TABLE buyers`);
  }
}
