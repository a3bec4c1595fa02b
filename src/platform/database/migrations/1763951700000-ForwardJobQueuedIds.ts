import { MigrationInterface, QueryRunner } from 'typeorm';

export class ForwardJobQueuedIds1763951700000 implements MigrationInterface {
  name = 'ForwardJobQueuedIds1763951700000';

  async up(q: QueryRunner): Promise<void> {
    // The recovery sweep after the queue engine lost its data walks the queued jobs in id order (keyset):
    // through this, its cost is the queued jobs', not the whole table's with its ended rows.
    await q.query(`CREATE INDEX vault_forward_jobs_queued_id_idx ON vault_forward_jobs (id) WHERE status = 'queued'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX vault_forward_jobs_queued_id_idx`);
  }
}
