import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0103: what may be shown of a method's secret fields (a response key's type, size and public key
 * thumbprint), worked out when they are written, so that a read never decrypts them.
 */
export class ForwardAuthenticationSecretDetails1763948103000 implements MigrationInterface {
  name = 'ForwardAuthenticationSecretDetails1763948103000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_authentications ADD COLUMN secret_details jsonb NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_authentications DROP COLUMN secret_details`);
  }
}
