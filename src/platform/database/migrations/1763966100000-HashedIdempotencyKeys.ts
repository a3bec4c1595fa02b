import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0139: Idempotency-Keys kept as a keyed hash (CardVault.keyedHash), never in clear. The hash needs
 * the merchant's fingerprint key, which only the vault can unwrap, so this migration cannot compute it; what a
 * running system needs decides the rest:
 *
 * - `vault_forward_idempotency_keys`: a row lives 24 h and answers retries meanwhile. Dropping the rows would
 *   let a retry within that day send again (a second charge), so they stay, marked `key_hashed = false`: the
 *   first request that presents such a key turns its row into the hashed form (the sealed answer resealed
 *   under the hashed key), and the purge deletes the rest when their 24 h end. No clear key outlives that day.
 * - `vault_forward_jobs.idempotency_key` becomes the hash. An ended job's key serves nothing: cleared. A job
 *   still waiting or running needs its clear key to send it downstream (new jobs carry it in their sealed
 *   plan): moved to `legacy_idempotency_key`, which the job's end clears.
 */
export class HashedIdempotencyKeys1763966100000 implements MigrationInterface {
  name = 'HashedIdempotencyKeys1763966100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_idempotency_keys ADD COLUMN key_hashed boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE vault_forward_idempotency_keys ALTER COLUMN key_hashed SET DEFAULT true`);
    await q.query(`ALTER TABLE vault_forward_jobs ADD COLUMN legacy_idempotency_key text`);
    await q.query(
      `UPDATE vault_forward_jobs SET legacy_idempotency_key = idempotency_key, idempotency_key = NULL
        WHERE idempotency_key IS NOT NULL AND finished_at IS NULL`,
    );
    await q.query(
      `UPDATE vault_forward_jobs SET idempotency_key = NULL WHERE idempotency_key IS NOT NULL AND finished_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // The hashes cannot be turned back into keys: hashed rows go (a retry sends again), clear ones stay.
    await q.query(`DELETE FROM vault_forward_idempotency_keys WHERE key_hashed`);
    await q.query(`ALTER TABLE vault_forward_idempotency_keys DROP COLUMN key_hashed`);
    await q.query(
      `UPDATE vault_forward_jobs SET idempotency_key = legacy_idempotency_key WHERE legacy_idempotency_key IS NOT NULL`,
    );
    await q.query(`ALTER TABLE vault_forward_jobs DROP COLUMN legacy_idempotency_key`);
  }
}
