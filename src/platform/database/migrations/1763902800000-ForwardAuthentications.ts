import { MigrationInterface, QueryRunner } from 'typeorm';

export class ForwardAuthentications1763902800000 implements MigrationInterface {
  name = 'ForwardAuthentications1763902800000';

  async up(q: QueryRunner): Promise<void> {
    // The composite key lets a method's row name its config and merchant together, so a method can
    // never hang off another merchant's config.
    await q.query(
      `ALTER TABLE vault_forward_configs ADD CONSTRAINT vault_forward_configs_id_merchant_key UNIQUE (id, merchant_account_id)`,
    );
    // Secret fields live only inside ciphertext (SecretSealer: AES-256-GCM, per-record data key wrapped
    // by master_key_id, AAD binding merchant, config and id). `fields` holds the non-secret ones as entered.
    await q.query(`
      CREATE TABLE vault_forward_authentications (
        id                  uuid PRIMARY KEY,
        merchant_account_id text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        config_id           uuid NOT NULL,
        kind                text NOT NULL CHECK (kind IN ('hmac-signature', 'mutual-tls', 'jwe-payload')),
        label               text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 100),
        fields              jsonb NOT NULL,
        warnings            jsonb NOT NULL DEFAULT '[]',
        ciphertext          bytea NOT NULL,
        wrapped_key         bytea NOT NULL,
        master_key_id       text NOT NULL,
        version             integer NOT NULL DEFAULT 1,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (config_id, merchant_account_id) REFERENCES vault_forward_configs (id, merchant_account_id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX vault_forward_authentications_keyset_idx ON vault_forward_authentications ` +
        `(merchant_account_id, config_id, created_at DESC, id DESC)`,
    );
    await q.query(
      `CREATE INDEX vault_forward_authentications_master_key_id_idx ON vault_forward_authentications (master_key_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE vault_forward_authentications`);
    await q.query(`ALTER TABLE vault_forward_configs DROP CONSTRAINT vault_forward_configs_id_merchant_key`);
  }
}
