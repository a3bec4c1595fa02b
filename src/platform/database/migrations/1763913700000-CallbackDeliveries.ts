import { MigrationInterface, QueryRunner } from 'typeorm';

export class CallbackDeliveries1763913700000 implements MigrationInterface {
  name = 'CallbackDeliveries1763913700000';

  async up(q: QueryRunner): Promise<void> {
    // The outbox of job-end callbacks. The body (the job resource, which may hold the downstream's
    // answer) lives only inside ciphertext (SecretSealer, AAD binding merchant and id). message_id is
    // the webhook-id: unique, so scheduling one job end twice delivers it once.
    await q.query(`
      CREATE TABLE vault_forward_callback_deliveries (
        id                  uuid PRIMARY KEY,
        merchant_account_id text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        message_id          text NOT NULL UNIQUE,
        url                 text NOT NULL,
        ciphertext          bytea NOT NULL,
        wrapped_key         bytea NOT NULL,
        master_key_id       text NOT NULL,
        state               text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
        attempts            integer NOT NULL DEFAULT 0,
        max_attempts        integer NOT NULL,
        next_attempt_at     timestamptz NOT NULL DEFAULT now(),
        last_status         integer,
        last_error          text,
        created_at          timestamptz NOT NULL DEFAULT now(),
        ended_at            timestamptz
      )`);
    await q.query(
      `CREATE INDEX vault_forward_callback_deliveries_due_idx ON vault_forward_callback_deliveries ` +
        `(next_attempt_at) WHERE state = 'pending'`,
    );
    await q.query(
      `CREATE INDEX vault_forward_callback_deliveries_ended_idx ON vault_forward_callback_deliveries (ended_at) WHERE state <> 'pending'`,
    );
    await q.query(
      `CREATE INDEX vault_forward_callback_deliveries_master_key_id_idx ON vault_forward_callback_deliveries (master_key_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE vault_forward_callback_deliveries`);
  }
}
