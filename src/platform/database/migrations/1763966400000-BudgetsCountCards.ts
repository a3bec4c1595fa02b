import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0142: the disclosure budgets count a card by its fingerprint, whatever carries it.
 * `checkout_sessions.card_fingerprint`: the collected card's fingerprint (the merchant's keyed hash, as a payment
 * method's), or the named stored card's, set with the card and erased with it. `vault_forward_disclosure_counts`
 * counts per card fingerprint, and now every count (Redis seeds a lost window from it): its rows keyed by payment
 * method are of no use to that key and last one window at most, so they go.
 */
export class BudgetsCountCards1763966400000 implements MigrationInterface {
  name = 'BudgetsCountCards1763966400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE checkout_sessions ADD COLUMN card_fingerprint text NULL`);
    await q.query(`DELETE FROM vault_forward_disclosure_counts`);
    await q.query(`ALTER TABLE vault_forward_disclosure_counts RENAME COLUMN payment_method_id TO card_fingerprint`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM vault_forward_disclosure_counts`);
    await q.query(`ALTER TABLE vault_forward_disclosure_counts RENAME COLUMN card_fingerprint TO payment_method_id`);
    await q.query(`ALTER TABLE checkout_sessions DROP COLUMN card_fingerprint`);
  }
}
