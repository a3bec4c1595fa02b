import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1763888400000 implements MigrationInterface {
  name = 'Foundation1763888400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE merchant_accounts (
        id           text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
        display_name text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 200),
        created_at   timestamptz NOT NULL DEFAULT now(),
        updated_at   timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id                  text PRIMARY KEY,
        merchant_account_id text NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        algorithm           text NOT NULL CHECK (algorithm IN ('ES512', 'ES256')),
        public_key          jsonb NOT NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        revoked_at          timestamptz NULL
      )`);
    await q.query(`CREATE INDEX api_keys_merchant_account_id_idx ON api_keys (merchant_account_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE merchant_accounts`);
  }
}
