/** What can run a statement: a TestApp's `db`, a pg Client. */
interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * A merchant-wide disclosure budget far above any test's load, for the load and fault tests that send a few cards
 * hundreds of times an hour (the defaults allow 60 sends of one card an hour, decision 0134): each forward is still
 * counted, and never refused. Set before the merchant's first forward, so no process has its budgets cached.
 */
export async function allowHeavyDisclosure(db: Queryable, merchantAccountId: string): Promise<void> {
  await db.query(
    `INSERT INTO vault_forward_disclosure_budgets
       (merchant_account_id, scope, window_seconds, distinct_cards, disclosures_per_card)
     VALUES ($1, 'merchant', 3600, 100000000, 100000000)
     ON CONFLICT (merchant_account_id, scope) DO UPDATE
       SET distinct_cards = EXCLUDED.distinct_cards, disclosures_per_card = EXCLUDED.disclosures_per_card`,
    [merchantAccountId],
  );
}
