import { MigrationInterface, QueryRunner } from 'typeorm';

export class ForwardJobs1763910000000 implements MigrationInterface {
  name = 'ForwardJobs1763910000000';

  async up(q: QueryRunner): Promise<void> {
    // A queued forward. What it sends (the plan: body with literal CVVs, forwarded header values) and
    // what it got back live apart, sealed, in the two tables below: this row holds no request content.
    await q.query(`
      CREATE TABLE vault_forward_jobs (
        id                  uuid PRIMARY KEY,
        merchant_account_id text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        status              text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
        method              text NOT NULL,
        target_url          text NOT NULL,
        payment_method_ids  text[] NOT NULL DEFAULT '{}',
        authentication_ids  text[] NOT NULL DEFAULT '{}',
        max_attempts        integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 20),
        idempotency_key     text,
        callback_url        text,
        attempts            jsonb NOT NULL DEFAULT '[]',
        next_attempt_at     timestamptz,
        response_status     integer,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        finished_at         timestamptz,
        CHECK ((status IN ('succeeded', 'failed', 'cancelled')) = (finished_at IS NOT NULL))
      )`);
    await q.query(
      `CREATE INDEX vault_forward_jobs_keyset_idx ON vault_forward_jobs (merchant_account_id, created_at DESC, id DESC)`,
    );
    await q.query(
      `CREATE INDEX vault_forward_jobs_status_keyset_idx ON vault_forward_jobs (merchant_account_id, status, created_at DESC, id DESC)`,
    );
    await q.query(
      `CREATE INDEX vault_forward_jobs_finished_idx ON vault_forward_jobs (finished_at) WHERE finished_at IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX vault_forward_jobs_queued_idx ON vault_forward_jobs (next_attempt_at) WHERE status = 'queued'`,
    );

    // Sealed with SecretSealer (AAD: purpose, merchant, job id), listed in SEALED_TABLES for rotate-keys.
    // The plan is deleted when its job ends; the response after FORWARD_JOB_RETENTION.
    for (const table of ['vault_forward_job_plans', 'vault_forward_job_responses']) {
      await q.query(`
        CREATE TABLE ${table} (
          job_id              uuid PRIMARY KEY REFERENCES vault_forward_jobs (id) ON DELETE CASCADE,
          merchant_account_id text NOT NULL,
          ciphertext          bytea NOT NULL,
          wrapped_key         bytea NOT NULL,
          master_key_id       text NOT NULL
        )`);
      await q.query(`CREATE INDEX ${table}_master_key_id_idx ON ${table} (master_key_id)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE vault_forward_job_responses`);
    await q.query(`DROP TABLE vault_forward_job_plans`);
    await q.query(`DROP TABLE vault_forward_jobs`);
  }
}
