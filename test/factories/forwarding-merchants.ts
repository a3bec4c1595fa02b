import { http } from '../support/http';
import type { TestApp } from '../support/test-app';
import { createApiKey } from './api-keys';
import { cardNumber, createCard } from './cards';
import { createMerchantAccount } from './merchant-accounts';

export interface ForwardingMerchant {
  id: string;
  token: string;
  card: { id: string; number: string };
}

/** A new merchant account with a token, a config enabling POST to 127.0.0.1:`port`, and one card. */
export async function createForwardingMerchant(
  t: TestApp,
  port: number,
  displayName: string,
): Promise<ForwardingMerchant> {
  const id = (await createMerchantAccount(t)).id;
  const token = await (await createApiKey(t, id)).token();
  const created = await http(t.url, '/vault-forward/configs', {
    method: 'POST',
    token,
    body: { display_name: displayName, hosts: [`127.0.0.1:${port}`], methods: ['POST'] },
  });
  if (created.status !== 201) throw new Error(`config not created: ${created.status} ${JSON.stringify(created.body)}`);
  const number = cardNumber();
  return { id, token, card: { id: (await createCard(t, id, { number })).id, number } };
}
