import { MigrationInterface, QueryRunner } from 'typeorm';

export class CheckoutSessionThreeDSecure1763940800000 implements MigrationInterface {
  name = 'CheckoutSessionThreeDSecure1763940800000';

  async up(q: QueryRunner): Promise<void> {
    // 3-D Secure values of a session's card (issue 23, item 3; decision 0101): one more part of the
    // session's envelope (sealParts, same data key), erased with the session like the security code.
    await q.query(`ALTER TABLE checkout_sessions ADD COLUMN three_d_secure_ciphertext bytea`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE checkout_sessions DROP COLUMN three_d_secure_ciphertext`);
  }
}
