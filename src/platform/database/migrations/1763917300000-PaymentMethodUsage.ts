import { MigrationInterface, QueryRunner } from 'typeorm';

export class PaymentMethodUsage1763917300000 implements MigrationInterface {
  name = 'PaymentMethodUsage1763917300000';

  async up(q: QueryRunner): Promise<void> {
    // bin: the first six digits, kept only for numbers of 15 digits or more (docs/decisions/0059,
    // "Payment methods as the Gr4vy SDK reads them"); NULL for shorter numbers and for cards stored
    // before this migration, whose number is only inside the ciphertext.
    // usage_count / last_used_at: forwards that released the card, counted by the forward-record batch writer.
    await q.query(`
      ALTER TABLE payment_methods
        ADD COLUMN bin          text NULL CHECK (bin ~ '^[0-9]{6}$'),
        ADD COLUMN usage_count  integer NOT NULL DEFAULT 0 CHECK (usage_count >= 0),
        ADD COLUMN last_used_at timestamptz NULL`);
    await q.query(
      `CREATE INDEX payment_methods_external_identifier_idx ON payment_methods (merchant_account_id, ` +
        `external_identifier, created_at DESC, id DESC) WHERE external_identifier IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX payment_methods_external_identifier_idx`);
    await q.query(`ALTER TABLE payment_methods DROP COLUMN last_used_at, DROP COLUMN usage_count, DROP COLUMN bin`);
  }
}
