import { MigrationInterface, QueryRunner } from 'typeorm';

export class ForwardRecordMerchantInitiated1763927600000 implements MigrationInterface {
  name = 'ForwardRecordMerchantInitiated1763927600000';

  async up(q: QueryRunner): Promise<void> {
    // x-vault-forward-merchant-initiated (issue 22, item 6). Records made before it said nothing, which
    // is what false means: the header's absence. A constant default adds the column without a rewrite.
    await q.query(`ALTER TABLE vault_forward_requests ADD COLUMN merchant_initiated boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vault_forward_requests DROP COLUMN merchant_initiated`);
  }
}
