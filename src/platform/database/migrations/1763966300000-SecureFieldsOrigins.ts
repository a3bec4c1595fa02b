import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0140: Secure Fields. `merchant_accounts.secure_fields_origins`: the web origins allowed to embed the
 * merchant's card fields (normalised `scheme://host[:port]`), empty by default; a GIN index answers "does any
 * merchant list this origin" in one lookup. `checkout_sessions.secure_fields_tries`: the tokenless submissions
 * a session has had from the secure-fields origin, counted atomically (at most 10 are served).
 */
export class SecureFieldsOrigins1763966300000 implements MigrationInterface {
  name = 'SecureFieldsOrigins1763966300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE merchant_accounts ADD COLUMN secure_fields_origins text[] NOT NULL DEFAULT '{}'::text[]`,
    );
    await q.query(
      `CREATE INDEX merchant_accounts_secure_fields_origins_idx ON merchant_accounts USING gin (secure_fields_origins)`,
    );
    await q.query(`ALTER TABLE checkout_sessions ADD COLUMN secure_fields_tries integer NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE checkout_sessions DROP COLUMN secure_fields_tries`);
    await q.query(`DROP INDEX merchant_accounts_secure_fields_origins_idx`);
    await q.query(`ALTER TABLE merchant_accounts DROP COLUMN secure_fields_origins`);
  }
}
