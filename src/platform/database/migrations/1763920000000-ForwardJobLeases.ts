import { MigrationInterface, QueryRunner } from 'typeorm';

export class ForwardJobLeases1763920000000 implements MigrationInterface {
  name = 'ForwardJobLeases1763920000000';

  async up(q: QueryRunner): Promise<void> {
    // A running job's lease: set by the claim, renewed by its worker while the attempt runs. When it has
    // lapsed, the housekeeping pass enqueues the attempt again, which only matters when the BullMQ job is
    // gone too (a worker killed while Redis lost its data): the next delivery closes it as worker-lost.
    // NULL for jobs claimed before this migration (treated as lapsed). Running rows are few: a partial index.
    await q.query(`ALTER TABLE vault_forward_jobs ADD COLUMN lease_expires_at timestamptz NULL`);
    await q.query(
      `CREATE INDEX vault_forward_jobs_running_idx ON vault_forward_jobs (lease_expires_at) WHERE status = 'running'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX vault_forward_jobs_running_idx`);
    await q.query(`ALTER TABLE vault_forward_jobs DROP COLUMN lease_expires_at`);
  }
}
