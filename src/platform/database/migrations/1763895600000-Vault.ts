import { MigrationInterface, QueryRunner } from 'typeorm';

export class Vault1763895600000 implements MigrationInterface {
  name = 'Vault1763895600000';

  async up(q: QueryRunner): Promise<void> {
    // One HMAC key per merchant for card fingerprints, stored wrapped by a vault master key, so
    // fingerprints stay stable across master-key rotation and differ between merchants.
    await q.query(`
      CREATE TABLE vault_merchant_keys (
        merchant_account_id text PRIMARY KEY REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        wrapped_key         bytea NOT NULL,
        master_key_id       text NOT NULL,
        created_at          timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX vault_merchant_keys_master_key_id_idx ON vault_merchant_keys (master_key_id)`);

    // Card number and cardholder name live only inside ciphertext (AES-256-GCM, per-record data key
    // wrapped by master_key_id). Plain columns hold what the API may show: scheme, last four, expiry.
    await q.query(`
      CREATE TABLE payment_methods (
        id                  uuid PRIMARY KEY,
        merchant_account_id text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        buyer_id            uuid NULL REFERENCES buyers (id) ON DELETE CASCADE,
        method              text NOT NULL CHECK (method IN ('card')),
        scheme              text NOT NULL,
        label               text NOT NULL CHECK (label ~ '^[0-9]{4}$'),
        expiration_date     text NOT NULL CHECK (expiration_date ~ '^(0[1-9]|1[0-2])/[0-9]{2}$'),
        fingerprint         text NOT NULL,
        external_identifier text NULL CHECK (char_length(external_identifier) BETWEEN 1 AND 200),
        ciphertext          bytea NOT NULL,
        wrapped_key         bytea NOT NULL,
        master_key_id       text NOT NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX payment_methods_keyset_idx ON payment_methods (merchant_account_id, created_at DESC, id DESC)`,
    );
    await q.query(
      `CREATE INDEX payment_methods_buyer_keyset_idx ON payment_methods (merchant_account_id, buyer_id, ` +
        `created_at DESC, id DESC) WHERE buyer_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX payment_methods_fingerprint_idx ON payment_methods (merchant_account_id, fingerprint)`);
    // Key rotation finds what is still wrapped by an old master key.
    await q.query(`CREATE INDEX payment_methods_master_key_id_idx ON payment_methods (master_key_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE payment_methods`);
    await q.query(`DROP TABLE vault_merchant_keys`);
  }
}
