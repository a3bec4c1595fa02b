import { MigrationInterface, QueryRunner } from 'typeorm';

export class CheckoutSessions1763917200000 implements MigrationInterface {
  name = 'CheckoutSessions1763917200000';

  async up(q: QueryRunner): Promise<void> {
    // A short-lived holder of one card and its security code (docs/checkout-sessions.md). The secrets
    // are parts of one envelope (one data key in wrapped_key): `ciphertext` the card number (null when
    // the card is a stored payment method), `security_code_ciphertext` the code. Every secret and card
    // column is nulled when the session expires (erased_at set); the row itself stays a day so a late
    // caller is told 410 rather than 404, then goes.
    await q.query(`
      CREATE TABLE checkout_sessions (
        id                       uuid PRIMARY KEY,
        merchant_account_id      text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        metadata                 jsonb NULL,
        expires_at               timestamptz NOT NULL,
        card_source              text NULL CHECK (card_source IN ('card', 'id')),
        payment_method_id        uuid NULL REFERENCES payment_methods (id) ON DELETE SET NULL,
        scheme                   text NULL,
        label                    text NULL,
        expiration_date          text NULL,
        ciphertext               bytea NULL,
        security_code_ciphertext bytea NULL,
        wrapped_key              bytea NULL,
        master_key_id            text NULL,
        security_code_erased_at  timestamptz NULL,
        erased_at                timestamptz NULL,
        created_at               timestamptz NOT NULL DEFAULT now(),
        updated_at               timestamptz NOT NULL DEFAULT now()
      )`);
    // The purge's UPDATE … WHERE expires_at <= now() AND erased_at IS NULL reads only live rows.
    await q.query(
      `CREATE INDEX checkout_sessions_live_expiry_idx ON checkout_sessions (expires_at) WHERE erased_at IS NULL`,
    );
    await q.query(`CREATE INDEX checkout_sessions_expiry_idx ON checkout_sessions (expires_at)`);
    await q.query(`CREATE INDEX checkout_sessions_master_key_id_idx ON checkout_sessions (master_key_id)`);
    await q.query(
      `CREATE INDEX checkout_sessions_payment_method_idx ON checkout_sessions (payment_method_id) WHERE payment_method_id IS NOT NULL`,
    );
    // Forwards that disclosed a session's card name it in their record.
    await q.query(`ALTER TABLE vault_forward_requests ADD COLUMN checkout_session_id uuid NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_requests DROP COLUMN checkout_session_id`);
    await q.query(`DROP TABLE checkout_sessions`);
  }
}
