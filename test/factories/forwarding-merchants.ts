import { http } from '../support/http';
import type { TestApp } from '../support/test-app';
import { createApiKey } from './api-keys';
import { storeCard } from './cards';
import { createMerchantAccount } from './merchant-accounts';

export interface ForwardingMerchant {
  id: string;
  token: string;
  card: { id: string; number: string };
}

export interface MerchantWithToken {
  id: string;
  /** A token of a new key of the merchant (scopes `*.read`, `*.write`). */
  token: string;
}

/** A new merchant account and a token for it. */
export async function createMerchantWithToken(t: TestApp): Promise<MerchantWithToken> {
  const id = (await createMerchantAccount(t)).id;
  return { id, token: await (await createApiKey(t, id)).token() };
}

/**
 * A new merchant account with a token and a config allowing forwards to 127.0.0.1:`port`, with `methods` or,
 * when none are given, the config's default; no card (a test that stores its own, with its own fields).
 */
export async function createMerchantWithConfig(
  t: TestApp,
  port: number,
  displayName: string,
  methods?: string[],
  /** `record_bodies: true`: its forwards' records keep their redacted bodies (decision 0138; off by default). */
  extra: { record_bodies?: boolean } = {},
): Promise<MerchantWithToken> {
  const { id, token } = await createMerchantWithToken(t);
  const created = await http(t.url, '/vault-forward/configs', {
    method: 'POST',
    token,
    body: { display_name: displayName, hosts: [`127.0.0.1:${port}`], ...(methods ? { methods } : {}), ...extra },
  });
  if (created.status !== 201) throw new Error(`config not created: ${created.status} ${JSON.stringify(created.body)}`);
  return { id, token };
}

/** A new merchant account with a token, a config enabling `methods` (POST) to 127.0.0.1:`port`, and one card. */
export async function createForwardingMerchant(
  t: TestApp,
  port: number,
  displayName: string,
  methods = ['POST'],
  extra: { record_bodies?: boolean } = {},
): Promise<ForwardingMerchant> {
  const { id, token } = await createMerchantWithConfig(t, port, displayName, methods, extra);
  return { id, token, card: await storeCard(t, id) };
}
