import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decisions 0153–0156: inbound routes. `inbound_routes`: a merchant's routes, the caller's secret sealed (the
 * three columns, null for the kinds without one; SEALED_TABLES). `inbound_requests`: one record per request a
 * route took (route, caller, the ids stored, outcome; no body). `inbound_route_windows`: the request count of a
 * route of kind `none` in its current fixed window, one row per route and window, counted in one statement.
 */
export class InboundRoutes1763967000000 implements MigrationInterface {
  name = 'InboundRoutes1763967000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE inbound_routes (
        id uuid PRIMARY KEY,
        merchant_account_id text NOT NULL,
        display_name text NOT NULL,
        upstream_url text NOT NULL,
        methods text[] NOT NULL,
        path_prefixes text[] NOT NULL,
        caller_authentication jsonb NOT NULL,
        max_body_bytes integer NOT NULL,
        timeout_seconds integer NOT NULL,
        field_mappings jsonb NOT NULL DEFAULT '{}'::jsonb,
        ciphertext bytea,
        wrapped_key bytea,
        master_key_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX inbound_routes_merchant_created_idx ON inbound_routes (merchant_account_id, created_at DESC, id DESC)`,
    );
    await q.query(`CREATE INDEX inbound_routes_master_key_idx ON inbound_routes (master_key_id)`);
    await q.query(`
      CREATE TABLE inbound_requests (
        id uuid PRIMARY KEY,
        merchant_account_id text NOT NULL,
        route_id uuid NOT NULL,
        request_id text NOT NULL,
        caller text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        outcome text NOT NULL,
        status integer NOT NULL,
        problem_code text,
        upstream_status integer,
        payment_method_ids uuid[] NOT NULL DEFAULT '{}'::uuid[],
        checkout_session_ids uuid[] NOT NULL DEFAULT '{}'::uuid[],
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX inbound_requests_merchant_created_idx ON inbound_requests (merchant_account_id, created_at DESC, id DESC)`,
    );
    await q.query(`CREATE INDEX inbound_requests_route_idx ON inbound_requests (route_id)`);
    await q.query(`
      CREATE TABLE inbound_route_windows (
        route_id uuid NOT NULL,
        window_start timestamptz NOT NULL,
        requests integer NOT NULL,
        PRIMARY KEY (route_id, window_start)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE inbound_route_windows`);
    await q.query(`DROP TABLE inbound_requests`);
    await q.query(`DROP TABLE inbound_routes`);
  }
}
