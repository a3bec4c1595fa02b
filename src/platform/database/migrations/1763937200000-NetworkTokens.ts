import { MigrationInterface, QueryRunner } from 'typeorm';

export class NetworkTokens1763937200000 implements MigrationInterface {
  name = 'NetworkTokens1763937200000';

  async up(q: QueryRunner): Promise<void> {
    // Network tokens of stored cards (issue 23, item 2). The token is sealed like a card number (AAD
    // `network-token`, merchant, payment method, id); only its last four digits are kept in the clear.
    await q.query(`
      CREATE TABLE payment_method_network_tokens (
        id                  uuid PRIMARY KEY,
        merchant_account_id text NOT NULL,
        payment_method_id   uuid NOT NULL REFERENCES payment_methods (id) ON DELETE CASCADE,
        status              text NOT NULL CHECK (status IN ('active', 'suspended')),
        expiration_date     text NOT NULL CHECK (expiration_date ~ '^(0[1-9]|1[0-2])/[0-9]{2}$'),
        label               text NOT NULL CHECK (label ~ '^[0-9]{4}$'),
        ciphertext          bytea NOT NULL,
        wrapped_key         bytea NOT NULL,
        master_key_id       text NOT NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX payment_method_network_tokens_card_idx
         ON payment_method_network_tokens (merchant_account_id, payment_method_id, created_at DESC)`,
    );
    await q.query(
      `CREATE INDEX payment_method_network_tokens_master_key_idx ON payment_method_network_tokens (master_key_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE payment_method_network_tokens`);
  }
}
