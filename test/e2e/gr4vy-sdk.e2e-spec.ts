import { Gr4vy, withToken } from '@gr4vy/sdk';
import { randomUUID } from 'node:crypto';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * A client nobody here wrote: the official Gr4vy TypeScript SDK, pointed at this service with
 * `serverURL`, signing its own tokens (ES512, kid = its own thumbprint of the key) with a key our CLI
 * code made. It parses our responses with its own schemas, so shape drift fails here.
 */
describe('Official @gr4vy/sdk client against the service (buyers)', () => {
  let t: TestApp;
  let gr4vy: Gr4vy;
  let merchant: string;

  beforeAll(async () => {
    t = await startTestApp();
    merchant = (await createMerchantAccount(t)).id;
    const key = await createApiKey(t, merchant);
    gr4vy = new Gr4vy({
      serverURL: t.url,
      merchantAccountId: merchant,
      bearerAuth: withToken({ privateKey: key.privateKeyPem }),
    });
  });
  afterAll(() => t.close());

  it('creates, lists (every page), gets, updates and deletes buyers', async () => {
    const tag = randomUUID().slice(0, 8);
    const created = [];
    for (let i = 0; i < 23; i++) {
      created.push(await gr4vy.buyers.create({ displayName: `SDK buyer ${tag} ${i}`, externalIdentifier: `sdk-${tag}-${i}` }));
    }
    expect(created[0]).toMatchObject({ type: 'buyer', merchantAccountId: merchant, displayName: `SDK buyer ${tag} 0` });
    expect(created[0].createdAt).toBeInstanceOf(Date);

    const listed: string[] = [];
    let pages = 0;
    for await (const page of await gr4vy.buyers.list({ limit: 5, search: tag })) {
      pages++;
      listed.push(...page.result.items.map((b) => b.id!));
      expect(pages).toBeLessThan(20);
    }
    expect(pages).toBe(5);
    expect(listed).toEqual(created.map((b) => b.id).reverse());

    const one = await gr4vy.buyers.get(created[3].id!);
    expect(one).toMatchObject({ id: created[3].id, displayName: `SDK buyer ${tag} 3`, externalIdentifier: `sdk-${tag}-3` });

    const updated = await gr4vy.buyers.update({ displayName: 'Renamed by SDK' }, created[3].id!);
    expect(updated).toMatchObject({ id: created[3].id, displayName: 'Renamed by SDK', externalIdentifier: `sdk-${tag}-3` });

    await gr4vy.buyers.delete(created[3].id!);
    await expect(gr4vy.buyers.get(created[3].id!)).rejects.toMatchObject({ statusCode: 404 });
  });
});
