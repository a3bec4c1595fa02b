import { MigrationInterface, QueryRunner } from 'typeorm';

export class Forwarding1763899200000 implements MigrationInterface {
  name = 'Forwarding1763899200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE vault_forward_configs (
        id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        merchant_account_id text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        display_name        text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 50),
        hosts               text[] NOT NULL CHECK (cardinality(hosts) BETWEEN 1 AND 50),
        methods             text[] NOT NULL CHECK (cardinality(methods) BETWEEN 1 AND 7),
        enabled             boolean NOT NULL DEFAULT true,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX vault_forward_configs_keyset_idx ON vault_forward_configs (merchant_account_id, created_at DESC, id DESC)`,
    );

    // One row per forward: what went where and how it ended. Never bodies, never header values.
    await q.query(`
      CREATE TABLE vault_forward_requests (
        id                  text PRIMARY KEY,
        merchant_account_id text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        config_id           uuid NULL,
        method              text NULL,
        target_url          text NULL,
        status              integer NULL,
        duration_ms         double precision NOT NULL,
        payment_method_ids  uuid[] NOT NULL DEFAULT '{}',
        authentication_ids  uuid[] NOT NULL DEFAULT '{}',
        error_type          text NULL,
        created_at          timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX vault_forward_requests_keyset_idx ON vault_forward_requests (merchant_account_id, created_at DESC, id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE vault_forward_requests`);
    await q.query(`DROP TABLE vault_forward_configs`);
  }
}
