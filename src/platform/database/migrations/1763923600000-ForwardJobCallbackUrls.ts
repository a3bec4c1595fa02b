import { MigrationInterface, QueryRunner } from 'typeorm';

export class ForwardJobCallbackUrls1763923600000 implements MigrationInterface {
  name = 'ForwardJobCallbackUrls1763923600000';

  async up(q: QueryRunner): Promise<void> {
    // A queued forward's whole callback URL, sealed (SecretSealer, AAD binding merchant and job; listed
    // in SEALED_TABLES): its query string may carry the receiver's token, so vault_forward_jobs.callback_url
    // keeps it as logged, without query, fragment or credentials (issue 19). Jobs created before this
    // migration have no row here and their whole URL in callback_url.
    await q.query(`
      CREATE TABLE vault_forward_job_callback_urls (
        job_id              uuid PRIMARY KEY REFERENCES vault_forward_jobs (id) ON DELETE CASCADE,
        merchant_account_id text NOT NULL,
        ciphertext          bytea NOT NULL,
        wrapped_key         bytea NOT NULL,
        master_key_id       text NOT NULL
      )`);
    await q.query(
      `CREATE INDEX vault_forward_job_callback_urls_master_key_id_idx ON vault_forward_job_callback_urls (master_key_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE vault_forward_job_callback_urls`);
  }
}
