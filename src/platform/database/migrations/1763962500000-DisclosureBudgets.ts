import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Decision 0134: disclosure budgets. `vault_forward_disclosure_budgets` holds what a merchant set, merchant-wide
 * (scope 'merchant') or for one config (scope = the config's id, removed with it); a limit left null takes the
 * default. `vault_forward_disclosure_counts` counts disclosures per card and fixed window where no Redis is
 * configured (with Redis the counts live there): a row per (merchant, scope, window, payment method).
 */
export class DisclosureBudgets1763962500000 implements MigrationInterface {
  name = 'DisclosureBudgets1763962500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE vault_forward_disclosure_budgets (
        merchant_account_id  text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        scope                text NOT NULL,
        config_id            uuid NULL REFERENCES vault_forward_configs (id) ON DELETE CASCADE,
        window_seconds       integer NOT NULL CHECK (window_seconds BETWEEN 60 AND 86400),
        distinct_cards       integer NULL CHECK (distinct_cards BETWEEN 1 AND 100000000),
        disclosures_per_card integer NULL CHECK (disclosures_per_card BETWEEN 1 AND 100000000),
        allowed_placeholders text[] NULL,
        webhook_url          text NULL,
        updated_at           timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (merchant_account_id, scope),
        CHECK ((config_id IS NULL AND scope = 'merchant') OR scope = config_id::text),
        CHECK (config_id IS NOT NULL OR allowed_placeholders IS NULL),
        CHECK (config_id IS NULL OR webhook_url IS NULL)
      )`);
    await q.query(`
      CREATE TABLE vault_forward_disclosure_counts (
        merchant_account_id text NOT NULL REFERENCES merchant_accounts (id) ON DELETE CASCADE,
        scope               text NOT NULL,
        window_start        bigint NOT NULL,
        window_end          bigint NOT NULL,
        payment_method_id   text NOT NULL,
        disclosures         integer NOT NULL,
        PRIMARY KEY (merchant_account_id, scope, window_start, payment_method_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE vault_forward_disclosure_counts`);
    await q.query(`DROP TABLE vault_forward_disclosure_budgets`);
  }
}
