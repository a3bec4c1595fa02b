import { MigrationInterface, QueryRunner } from 'typeorm';

export class WebhookSecrets1763906400000 implements MigrationInterface {
  name = 'WebhookSecrets1763906400000';

  async up(q: QueryRunner): Promise<void> {
    // The secret's bytes live only inside ciphertext (SecretSealer, AAD binding merchant and id).
    // A secret stops being current when a newer one is created (rotated_at) and stops signing 24 h later (expires_at).
    await q.query(`
      CREATE TABLE vault_forward_webhook_secrets (
        id                  uuid PRIMARY KEY,
        merchant_account_id text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        ciphertext          bytea NOT NULL,
        wrapped_key         bytea NOT NULL,
        master_key_id       text NOT NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        rotated_at          timestamptz,
        expires_at          timestamptz,
        CHECK ((rotated_at IS NULL) = (expires_at IS NULL))
      )`);
    // One current secret per merchant account, so two concurrent creations cannot both stay current.
    await q.query(
      `CREATE UNIQUE INDEX vault_forward_webhook_secrets_current_idx ON vault_forward_webhook_secrets ` +
        `(merchant_account_id) WHERE rotated_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX vault_forward_webhook_secrets_keyset_idx ON vault_forward_webhook_secrets ` +
        `(merchant_account_id, created_at DESC, id DESC)`,
    );
    await q.query(
      `CREATE INDEX vault_forward_webhook_secrets_master_key_id_idx ON vault_forward_webhook_secrets (master_key_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE vault_forward_webhook_secrets`);
  }
}
