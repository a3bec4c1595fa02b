import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0158: an inbound route's upstream headers and recorded bodies. `inbound_routes` gains the headers'
 * names (answered) and their values, sealed as a part beside the caller secret under the route's one data key
 * (`upstream_headers`; SEALED_TABLES: inbound_routes), and `record_bodies` with its days (off, 7 days, for every
 * existing route). `inbound_requests` gains the kept bodies sealed in the three columns of SEALED_TABLES
 * (inbound_requests), their truncation flags, and `bodies_kept_until`, set when bodies are kept and kept after the
 * purge erases them; the partial index holds only the records that still have bodies, for the purge.
 */
export class InboundRouteHeadersAndBodies1763967200000 implements MigrationInterface {
  name = 'InboundRouteHeadersAndBodies1763967200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE inbound_routes
         ADD COLUMN upstream_header_names text[] NOT NULL DEFAULT '{}'::text[],
         ADD COLUMN upstream_headers bytea,
         ADD COLUMN record_bodies boolean NOT NULL DEFAULT false,
         ADD COLUMN record_bodies_retention_days smallint NOT NULL DEFAULT 7
           CHECK (record_bodies_retention_days BETWEEN 1 AND 30)`,
    );
    await q.query(
      `ALTER TABLE inbound_requests
         ADD COLUMN ciphertext bytea,
         ADD COLUMN wrapped_key bytea,
         ADD COLUMN master_key_id text,
         ADD COLUMN request_body_truncated boolean NOT NULL DEFAULT false,
         ADD COLUMN response_body_truncated boolean NOT NULL DEFAULT false,
         ADD COLUMN bodies_kept_until timestamptz`,
    );
    await q.query(`CREATE INDEX inbound_requests_master_key_idx ON inbound_requests (master_key_id)`);
    await q.query(
      `CREATE INDEX inbound_requests_bodies_kept_idx ON inbound_requests (created_at) WHERE wrapped_key IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX inbound_requests_bodies_kept_idx`);
    await q.query(`DROP INDEX inbound_requests_master_key_idx`);
    await q.query(
      `ALTER TABLE inbound_requests DROP COLUMN ciphertext, DROP COLUMN wrapped_key, DROP COLUMN master_key_id,
         DROP COLUMN request_body_truncated, DROP COLUMN response_body_truncated, DROP COLUMN bodies_kept_until`,
    );
    await q.query(
      `ALTER TABLE inbound_routes DROP COLUMN upstream_header_names, DROP COLUMN upstream_headers,
         DROP COLUMN record_bodies, DROP COLUMN record_bodies_retention_days`,
    );
  }
}
