import { MigrationInterface, QueryRunner } from 'typeorm';

export class IdempotencyKeys1763913600000 implements MigrationInterface {
  name = 'IdempotencyKeys1763913600000';

  async up(q: QueryRunner): Promise<void> {
    // One row per (merchant account, Idempotency-Key) for 24 h. `fingerprint` is a SHA-256 of the
    // request, never the request. A synchronous forward's answer lives only inside ciphertext
    // (SecretSealer, AAD binding merchant, key and row id); a queued one points at its job.
    await q.query(`
      CREATE TABLE vault_forward_idempotency_keys (
        id                  uuid PRIMARY KEY,
        merchant_account_id text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        key                 text NOT NULL,
        fingerprint         bytea NOT NULL,
        kind                text NOT NULL CHECK (kind IN ('sync', 'async')),
        state               text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done')),
        job_id              uuid,
        ciphertext          bytea,
        wrapped_key         bytea,
        master_key_id       text,
        created_at          timestamptz NOT NULL DEFAULT now(),
        expires_at          timestamptz NOT NULL DEFAULT now() + interval '24 hours',
        UNIQUE (merchant_account_id, key)
      )`);
    await q.query(
      `CREATE INDEX vault_forward_idempotency_keys_expires_at_idx ON vault_forward_idempotency_keys (expires_at)`,
    );
    await q.query(
      `CREATE INDEX vault_forward_idempotency_keys_master_key_id_idx ON vault_forward_idempotency_keys (master_key_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE vault_forward_idempotency_keys`);
  }
}
