import { Injectable } from '@nestjs/common';
import { Sql } from '../../../platform/database/sql';

/** A row of vault_forward_disclosure_budgets: scope 'merchant', or a config's id. */
export interface DisclosureBudgetRow {
  scope: string;
  config_id: string | null;
  window_seconds: number;
  distinct_cards: number | null;
  disclosures_per_card: number | null;
  allowed_placeholders: string[] | null;
  webhook_url: string | null;
}
const COLUMNS =
  'scope, config_id, window_seconds, distinct_cards, disclosures_per_card, allowed_placeholders, webhook_url';

/** Every read and write of vault_forward_disclosure_budgets (decision 0134), as prepared statements. */
@Injectable()
export class DisclosureBudgetsRepository {
  constructor(private readonly sql: Sql) {}

  /** The budgets a merchant account set: merchant-wide and per config (a forward reads them, cached). */
  ofMerchant(merchantAccountId: string): Promise<DisclosureBudgetRow[]> {
    return this.sql.prepared<DisclosureBudgetRow & Record<string, unknown>>(
      'budgets.of-merchant',
      `SELECT ${COLUMNS} FROM vault_forward_disclosure_budgets WHERE merchant_account_id = $1`,
      [merchantAccountId],
    );
  }

  /** Sets one budget whole (PUT), and returns it as stored. */
  async put(merchantAccountId: string, row: DisclosureBudgetRow): Promise<DisclosureBudgetRow> {
    const [stored] = await this.sql.prepared<DisclosureBudgetRow & Record<string, unknown>>(
      'budgets.put',
      `INSERT INTO vault_forward_disclosure_budgets
         (merchant_account_id, scope, config_id, window_seconds, distinct_cards, disclosures_per_card,
          allowed_placeholders, webhook_url)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (merchant_account_id, scope) DO UPDATE SET
         window_seconds = EXCLUDED.window_seconds, distinct_cards = EXCLUDED.distinct_cards,
         disclosures_per_card = EXCLUDED.disclosures_per_card, allowed_placeholders = EXCLUDED.allowed_placeholders,
         webhook_url = EXCLUDED.webhook_url, updated_at = now()
       RETURNING ${COLUMNS}`,
      [
        merchantAccountId,
        row.scope,
        row.config_id,
        row.window_seconds,
        row.distinct_cards,
        row.disclosures_per_card,
        row.allowed_placeholders,
        row.webhook_url,
      ],
    );
    return stored;
  }

  /** Removes one budget (the defaults apply again); whether there was one. */
  async remove(merchantAccountId: string, scope: string): Promise<boolean> {
    const rows = await this.sql.prepared(
      'budgets.remove',
      `DELETE FROM vault_forward_disclosure_budgets WHERE merchant_account_id = $1 AND scope = $2 RETURNING scope`,
      [merchantAccountId, scope],
    );
    return rows.length > 0;
  }
}
