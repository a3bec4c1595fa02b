import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0104: a forward record keeps the request as sent and the answer after its response rules,
 * redacted (placeholder text in place of every filled value, secret-bearing header values redacted,
 * card numbers masked) and capped, sealed with SecretSealer (`ciphertext`, `wrapped_key`,
 * `master_key_id`: listed in SEALED_TABLES for key rotation), until FORWARD_RECORD_BODY_RETENTION_DAYS
 * passes and the purge nulls them. The partial indexes hold only the rows that still have bodies: the
 * purge finds the oldest of them, and rotation the ones under an old key, without reading the rest.
 */
export class ForwardRecordBodies1763948000000 implements MigrationInterface {
  name = 'ForwardRecordBodies1763948000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE vault_forward_requests
         ADD COLUMN ciphertext bytea,
         ADD COLUMN wrapped_key bytea,
         ADD COLUMN master_key_id text,
         ADD COLUMN request_body_truncated boolean NOT NULL DEFAULT false,
         ADD COLUMN response_body_truncated boolean NOT NULL DEFAULT false`,
    );
    await q.query(
      `CREATE INDEX vault_forward_requests_bodies_created_at ON vault_forward_requests (created_at)
        WHERE wrapped_key IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX vault_forward_requests_master_key_id ON vault_forward_requests (master_key_id)
        WHERE master_key_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX vault_forward_requests_master_key_id`);
    await q.query(`DROP INDEX vault_forward_requests_bodies_created_at`);
    await q.query(
      `ALTER TABLE vault_forward_requests
         DROP COLUMN ciphertext, DROP COLUMN wrapped_key, DROP COLUMN master_key_id,
         DROP COLUMN request_body_truncated, DROP COLUMN response_body_truncated`,
    );
  }
}
