import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0138: a forward record keeps its redacted request and answer only when its config asks
 * (`record_bodies`, off for every existing config), for `record_bodies_retention_days` (1–30, 7 by default).
 * Each record says how long its bodies are kept (`bodies_retention_days`, set when they are recorded, null when
 * none were): the purge reads it, so a config changed or deleted later never lengthens what was promised. Bodies
 * recorded before this migration, which no config asked for, have none and go at the purge's next run.
 */
export class ConfigRecordBodies1763966000000 implements MigrationInterface {
  name = 'ConfigRecordBodies1763966000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE vault_forward_configs
         ADD COLUMN record_bodies boolean NOT NULL DEFAULT false,
         ADD COLUMN record_bodies_retention_days smallint NOT NULL DEFAULT 7
           CHECK (record_bodies_retention_days BETWEEN 1 AND 30)`,
    );
    await q.query(
      `ALTER TABLE vault_forward_requests
         ADD COLUMN bodies_retention_days smallint CHECK (bodies_retention_days BETWEEN 1 AND 30)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_requests DROP COLUMN bodies_retention_days`);
    await q.query(
      `ALTER TABLE vault_forward_configs DROP COLUMN record_bodies, DROP COLUMN record_bodies_retention_days`,
    );
  }
}
