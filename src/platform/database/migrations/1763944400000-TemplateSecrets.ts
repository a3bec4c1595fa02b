import { MigrationInterface, QueryRunner } from 'typeorm';

/** Decision 0102: a `template-secrets` authentication method holds one named secret for `hmac_sha256(SECRET.name)`. */
export class TemplateSecrets1763944400000 implements MigrationInterface {
  name = 'TemplateSecrets1763944400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_authentications DROP CONSTRAINT vault_forward_authentications_kind_check`);
    await q.query(
      `ALTER TABLE vault_forward_authentications ADD CONSTRAINT vault_forward_authentications_kind_check ` +
        `CHECK (kind IN ('hmac-signature', 'mutual-tls', 'jwe-payload', 'template-secrets'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM vault_forward_authentications WHERE kind = 'template-secrets'`);
    await q.query(`ALTER TABLE vault_forward_authentications DROP CONSTRAINT vault_forward_authentications_kind_check`);
    await q.query(
      `ALTER TABLE vault_forward_authentications ADD CONSTRAINT vault_forward_authentications_kind_check ` +
        `CHECK (kind IN ('hmac-signature', 'mutual-tls', 'jwe-payload'))`,
    );
  }
}
