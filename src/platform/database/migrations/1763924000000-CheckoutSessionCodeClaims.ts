import { MigrationInterface, QueryRunner } from 'typeorm';

export class CheckoutSessionCodeClaims1763924000000 implements MigrationInterface {
  name = 'CheckoutSessionCodeClaims1763924000000';

  async up(q: QueryRunner): Promise<void> {
    // The forward that holds a session's security code while it is in flight (issue 19, defect 7): its id
    // and a lease, taken with one conditional UPDATE, so two forwards in any processes never both send the
    // code, and a holder that died frees it when its lease lapses (a queued job's next attempt at once).
    await q.query(
      `ALTER TABLE checkout_sessions ADD COLUMN security_code_claim text NULL,
         ADD COLUMN security_code_claimed_until timestamptz NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE checkout_sessions DROP COLUMN security_code_claimed_until, DROP COLUMN security_code_claim`,
    );
  }
}
