import { MigrationInterface, QueryRunner } from 'typeorm';

export class VaultForwardResponseRules1763933600000 implements MigrationInterface {
  name = 'VaultForwardResponseRules1763933600000';

  async up(q: QueryRunner): Promise<void> {
    // Issue 27: what happens to card data in a downstream's answer (decisions/0097, 0098). Constant
    // defaults add the columns without a rewrite, and mean what configs did before: the answer as it came.
    await q.query(`ALTER TABLE vault_forward_configs ADD COLUMN response_rules jsonb NOT NULL DEFAULT '[]'`);
    await q.query(
      `ALTER TABLE vault_forward_configs ADD COLUMN unmatched_pan text NOT NULL DEFAULT 'pass'
         CHECK (unmatched_pan IN ('pass', 'mask', 'refuse'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_configs DROP COLUMN unmatched_pan`);
    await q.query(`ALTER TABLE vault_forward_configs DROP COLUMN response_rules`);
  }
}
