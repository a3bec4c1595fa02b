import { randomBytes } from 'node:crypto';
import { MerchantAccountsService } from '../../src/modules/merchants/accounts/merchant-accounts.service';
import { MerchantAccount } from '../../src/modules/merchants/accounts/merchant-account.entity';
import type { TestApp } from '../support/test-app';

/** A merchant account with a unique slug, so test files sharing the run's database never collide. */
export async function createMerchantAccount(
  t: TestApp,
  overrides: { id?: string; displayName?: string } = {},
): Promise<MerchantAccount> {
  const id = overrides.id ?? `m-${randomBytes(5).toString('hex')}`;
  return t.get(MerchantAccountsService).create(id, overrides.displayName ?? `Merchant ${id}`);
}
