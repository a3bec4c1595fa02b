import { MigrationInterface, QueryRunner } from 'typeorm';

export class VaultForwardDefinitions1763930000000 implements MigrationInterface {
  name = 'VaultForwardDefinitions1763930000000';

  async up(q: QueryRunner): Promise<void> {
    // Definitions an instance administrator adds (issue 22, item 1); the shipped catalog is code, not rows.
    await q.query(`
      CREATE TABLE vault_forward_definitions (
        id               text PRIMARY KEY CHECK (id ~ '^[a-z0-9]([a-z0-9-]{0,48}[a-z0-9])?$' AND id NOT LIKE 'custom-%'),
        display_name     text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 50),
        hosts            text[] NOT NULL CHECK (cardinality(hosts) BETWEEN 1 AND 50),
        authentications  jsonb NOT NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now()
      )`);
    // Every config names its definition (item 2). A config made before has its own generated custom
    // definition, `custom-<config id>`, derived from the config itself: its hosts, every kind of ours.
    await q.query(`ALTER TABLE vault_forward_configs ADD COLUMN definition_id text NULL`);
    await q.query(`UPDATE vault_forward_configs SET definition_id = 'custom-' || id::text`);
    await q.query(`ALTER TABLE vault_forward_configs ALTER COLUMN definition_id SET NOT NULL`);
    // One config per definition and merchant account, as Gr4vy's (a custom definition is one config's anyway).
    await q.query(
      `CREATE UNIQUE INDEX vault_forward_configs_definition_key ON vault_forward_configs (merchant_account_id, definition_id)`,
    );
    await q.query(`CREATE INDEX vault_forward_configs_definition_idx ON vault_forward_configs (definition_id)`);
    // How a method was written, so it is answered in the same shape: ours, or Gr4vy's `fields[]` (item 3).
    await q.query(
      `ALTER TABLE vault_forward_authentications ADD COLUMN shape text NOT NULL DEFAULT 'ours' CHECK (shape IN ('ours', 'gr4vy'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_authentications DROP COLUMN shape`);
    await q.query(`DROP INDEX vault_forward_configs_definition_idx`);
    await q.query(`DROP INDEX vault_forward_configs_definition_key`);
    await q.query(`ALTER TABLE vault_forward_configs DROP COLUMN definition_id`);
    await q.query(`DROP TABLE vault_forward_definitions`);
  }
}
