import { MigrationInterface, QueryRunner } from 'typeorm';

const BEFORE = `'hmac-signature', 'mutual-tls', 'jwe-payload', 'template-secrets'`;
const SIGNING = `'http-signature', 'oauth1-rsa', 'aws-sigv4', 'http-message-signature'`;

/** Decision 0122: four kinds that sign a request as a provider's scheme defines it. */
export class SigningAuthenticationKinds1763955300000 implements MigrationInterface {
  name = 'SigningAuthenticationKinds1763955300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_authentications DROP CONSTRAINT vault_forward_authentications_kind_check`);
    await q.query(
      `ALTER TABLE vault_forward_authentications ADD CONSTRAINT vault_forward_authentications_kind_check ` +
        `CHECK (kind IN (${BEFORE}, ${SIGNING}))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM vault_forward_authentications WHERE kind IN (${SIGNING})`);
    await q.query(`ALTER TABLE vault_forward_authentications DROP CONSTRAINT vault_forward_authentications_kind_check`);
    await q.query(
      `ALTER TABLE vault_forward_authentications ADD CONSTRAINT vault_forward_authentications_kind_check ` +
        `CHECK (kind IN (${BEFORE}))`,
    );
  }
}
