import { randomUUID } from 'node:crypto';
import { Buyer } from '../../src/modules/payments/buyers/buyer.entity';
import { BuyersService } from '../../src/modules/payments/buyers/buyers.service';
import type { TestApp } from '../support/test-app';

/** One buyer through the real service. */
export function createBuyer(t: TestApp, merchantAccountId: string, displayName = 'Test buyer'): Promise<Buyer> {
  return t.get(BuyersService).create(merchantAccountId, displayName, `buyer-${randomUUID()}`);
}

/**
 * Bulk buyers straight through SQL, with created_at values chosen by the test: `count` rows within
 * one millisecond, cycling through `distinctMicros` microsecond offsets, so many rows tie exactly
 * and the rest differ only below the millisecond. Returns their ids in list order (newest first).
 */
export async function insertBuyersWithinOneMillisecond(
  t: TestApp,
  merchantAccountId: string,
  count: number,
  options: { at?: string; distinctMicros?: number } = {},
): Promise<string[]> {
  const at = options.at ?? '2026-11-20T09:14:03.123000+00:00';
  await t.db.query(
    `INSERT INTO buyers (merchant_account_id, display_name, created_at, updated_at)
     SELECT $1, 'Bulk buyer ' || g, ts, ts
       FROM generate_series(1, $2::int) g,
            LATERAL (SELECT $3::timestamptz + ((g % $4::int) * interval '1 microsecond') AS ts) t`,
    [merchantAccountId, count, at, options.distinctMicros ?? 7],
  );
  const rows: Array<{ id: string }> = await t.db.query(
    `SELECT id FROM buyers WHERE merchant_account_id = $1 ORDER BY created_at DESC, id DESC`,
    [merchantAccountId],
  );
  return rows.map((r) => r.id);
}
