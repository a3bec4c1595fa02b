import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0139: a queued forward's answer is kept only while someone needs it. `response_received_at`: when
 * the merchant first had it (a read of the ended job, or its callback delivered); `response_erased_at` and
 * `response_erased_reason` ('received': a grace after that; 'retention': FORWARD_JOB_ANSWER_RETENTION after
 * the end) say that the sealed answer is gone and why, while `response_status` stays.
 */
export class ForwardJobAnswerErasure1763966200000 implements MigrationInterface {
  name = 'ForwardJobAnswerErasure1763966200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE vault_forward_jobs
        ADD COLUMN response_received_at timestamptz,
        ADD COLUMN response_erased_at timestamptz,
        ADD COLUMN response_erased_reason text CHECK (response_erased_reason IN ('received', 'retention'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE vault_forward_jobs
        DROP COLUMN response_received_at, DROP COLUMN response_erased_at, DROP COLUMN response_erased_reason`);
  }
}
