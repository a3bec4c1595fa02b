import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { getToken, Gr4vy, JWTScope, withToken } from '@gr4vy/sdk';
import * as errors from '@gr4vy/sdk/models/errors';
import { createApiKey } from '../factories/api-keys';
import { cardNumber } from '../factories/cards';
import { createForwardingMerchant } from '../factories/forwarding-merchants';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { contractStats } from '../support/contract';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { checkedFetch, checkedGr4vy, expectNoSdkViolations } from '../support/checked-clients';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

// Every SDK answer is held against the document (and the strict check) in its response hook.
afterEach(expectNoSdkViolations);

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
    gr4vy = checkedGr4vy(t.url, {
      merchantAccountId: merchant,
      bearerAuth: withToken({ privateKey: key.privateKeyPem }),
    });
  });
  afterAll(() => t.close());

  it('creates, lists (every page), gets, updates and deletes buyers', async () => {
    const tag = randomUUID().slice(0, 8);
    const created = [];
    for (let i = 0; i < 23; i++) {
      created.push(
        await gr4vy.buyers.create({ displayName: `SDK buyer ${tag} ${i}`, externalIdentifier: `sdk-${tag}-${i}` }),
      );
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
    expect(one).toMatchObject({
      id: created[3].id,
      displayName: `SDK buyer ${tag} 3`,
      externalIdentifier: `sdk-${tag}-3`,
    });

    const updated = await gr4vy.buyers.update({ displayName: 'Renamed by SDK' }, created[3].id!);
    expect(updated).toMatchObject({
      id: created[3].id,
      displayName: 'Renamed by SDK',
      externalIdentifier: `sdk-${tag}-3`,
    });

    await gr4vy.buyers.delete(created[3].id!);
    // The SDK's answers go through the contract checks of http(): one check per answer, the 404 too.
    const checked = contractStats.checked;
    await expect(gr4vy.buyers.get(created[3].id!)).rejects.toMatchObject({ statusCode: 404 });
    expect(contractStats.checked).toBe(checked + 1);
  });
});

/**
 * Issue 12, items 1, 2 and 6: merchant accounts with an instance key, then cards of a buyer of that
 * merchant account, all through the SDK's own calls and response schemas.
 */
describe('Official @gr4vy/sdk client against the service (merchant accounts, payment methods, a buyer’s cards)', () => {
  let t: TestApp;
  let admin: Gr4vy;

  beforeAll(async () => {
    t = await startTestApp();
    const instanceKey = await createApiKey(t, null);
    admin = checkedGr4vy(t.url, { bearerAuth: withToken({ privateKey: instanceKey.privateKeyPem }) });
  });
  afterAll(() => t.close());

  it('creates, gets, lists and updates a merchant account with an instance key', async () => {
    const id = `sdk-${randomUUID().slice(0, 8)}`;
    // The SDK sends account_updater_enabled / async_network_tokens_enabled = false by default.
    const created = await admin.merchantAccounts.create({ id, displayName: 'SDK merchant' });
    expect(created).toMatchObject({
      type: 'merchant-account',
      id,
      displayName: 'SDK merchant',
      accountUpdaterEnabled: false,
      asyncNetworkTokensEnabled: false,
    });
    expect(created.createdAt).toBeInstanceOf(Date);
    const nullsSent = await admin.merchantAccounts.create({
      id: `${id}-n`,
      displayName: 'Nulls',
      overCaptureAmount: null,
      loonAcceptedSchemes: null,
    });
    expect(nullsSent).toMatchObject({
      overCaptureAmount: null,
      loonAcceptedSchemes: null,
      accountUpdaterEnabled: false,
    });

    expect(await admin.merchantAccounts.get(id)).toEqual(created);

    const firstPage = await admin.merchantAccounts.list(undefined, 100);
    expect(firstPage.result.items.map((m) => m.id)).toEqual(expect.arrayContaining([id, `${id}-n`]));

    const updated = await admin.merchantAccounts.update({ displayName: 'SDK merchant, renamed' }, id);
    expect(updated).toMatchObject({ id, displayName: 'SDK merchant, renamed', accountUpdaterEnabled: false });

    // 422 is the SDK's HTTPValidationError, which takes our Gr4vy-shaped body (issue 22).
    const refused = admin.merchantAccounts.update({ accountUpdaterEnabled: true }, id);
    await expect(refused).rejects.toBeInstanceOf(errors.HTTPValidationError);
    await expect(refused).rejects.toMatchObject({ statusCode: 422 });
    expect((await admin.merchantAccounts.get(id)).displayName).toBe('SDK merchant, renamed');
  });

  it('stores cards for a buyer (by id and by external identifier), gets, lists, lists the buyer’s cards and deletes', async () => {
    const merchant = (
      await admin.merchantAccounts.create({ id: `sdk-${randomUUID().slice(0, 8)}`, displayName: 'Cards' })
    ).id;
    const key = await createApiKey(t, merchant);
    const gr4vy = checkedGr4vy(t.url, {
      merchantAccountId: merchant,
      bearerAuth: withToken({ privateKey: key.privateKeyPem }),
    });
    const buyer = await gr4vy.buyers.create({ displayName: 'Card holder', externalIdentifier: 'sdk-holder' });

    const number1 = cardNumber('4', 16);
    const number2 = cardNumber('37', 15);
    const first = await gr4vy.paymentMethods.create({
      method: 'card',
      number: number1,
      expirationDate: '12/30',
      buyerId: buyer.id,
      externalIdentifier: 'pm-1',
    });
    expect(first).toMatchObject({
      type: 'payment-method',
      method: 'card',
      merchantAccountId: merchant,
      scheme: 'visa',
      label: number1.slice(-4),
      expirationDate: '12/30',
      details: { bin: number1.slice(0, 6), cardType: null },
      status: 'succeeded',
      usageCount: 0,
      citUsageCount: 0,
      hasReplacement: false,
      lastUsedAt: null,
      externalIdentifier: 'pm-1',
      buyer: {
        id: buyer.id,
        displayName: 'Card holder',
        externalIdentifier: 'sdk-holder',
        merchantAccountId: merchant,
      },
    });
    const second = await gr4vy.paymentMethods.create({
      method: 'card',
      number: number2,
      expirationDate: '01/29',
      buyerExternalIdentifier: 'sdk-holder',
    });
    expect(second).toMatchObject({ scheme: 'amex', details: { bin: number2.slice(0, 6) }, buyer: { id: buyer.id } });
    const loose = await gr4vy.paymentMethods.create({
      method: 'card',
      number: cardNumber('4', 16),
      expirationDate: '02/28',
    });
    expect(loose.buyer).toBeNull();

    expect(await gr4vy.paymentMethods.get(first.id)).toEqual(first);

    const ids = async (request: Parameters<typeof gr4vy.paymentMethods.list>[0]) => {
      const all: string[] = [];
      for await (const page of await gr4vy.paymentMethods.list(request))
        all.push(...page.result.items.map((pm) => pm.id));
      return all;
    };
    expect(await ids({ limit: 1 })).toEqual([loose.id, second.id, first.id]);
    expect(await ids({ buyerId: buyer.id! })).toEqual([second.id, first.id]);
    expect(await ids({ buyerExternalIdentifier: 'sdk-holder', limit: 1 })).toEqual([second.id, first.id]);
    expect(await ids({ externalIdentifier: 'pm-1' })).toEqual([first.id]);
    expect(await ids({ status: ['succeeded'] })).toEqual([loose.id, second.id, first.id]);
    expect(await ids({ status: ['processing', 'failed'] })).toEqual([]);

    const cards = await gr4vy.buyers.paymentMethods.list({ buyerId: buyer.id });
    expect(cards.items.map((pm) => pm.id)).toEqual([second.id, first.id]);
    expect(cards.items[0]).toMatchObject({
      usageCount: 0,
      hasReplacement: false,
      details: { bin: number2.slice(0, 6) },
    });
    const byExternal = await gr4vy.buyers.paymentMethods.list({
      buyerExternalIdentifier: 'sdk-holder',
      sortBy: 'last_used_at',
      orderBy: 'asc',
    });
    expect(byExternal.items.map((pm) => pm.id)).toEqual([first.id, second.id]);

    await gr4vy.paymentMethods.delete(first.id);
    await expect(gr4vy.paymentMethods.get(first.id)).rejects.toMatchObject({ statusCode: 404 });
    expect((await gr4vy.buyers.paymentMethods.list({ buyerId: buyer.id })).items.map((pm) => pm.id)).toEqual([
      second.id,
    ]);
    await expect(
      gr4vy.paymentMethods.create({
        method: 'card',
        number: cardNumber(),
        expirationDate: '12/30',
        buyerExternalIdentifier: 'nobody',
      }),
    ).rejects.toMatchObject({
      statusCode: 404,
    });
  });
});

/**
 * Issue 22, items 4 and 5: the SDK's typed errors (it builds them only from an application/json body
 * in Gr4vy's shape, which it asks for with `Accept: application/json`), our code in them, and its
 * scope spellings. Clients that ask for problem+json, or send no Accept, keep RFC 9457.
 */
describe('Official @gr4vy/sdk client against the service (typed errors, scope spellings)', () => {
  let t: TestApp;
  let downstream: Downstream;
  let merchant: string;
  let privateKey: string;
  let gr4vy: Gr4vy;

  beforeAll(async () => {
    downstream = await startHttpDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    merchant = (await createMerchantAccount(t)).id;
    privateKey = (await createApiKey(t, merchant)).privateKeyPem;
    gr4vy = checkedGr4vy(t.url, { merchantAccountId: merchant, bearerAuth: withToken({ privateKey }) });
  });
  afterAll(async () => {
    await t.close();
    await downstream.close();
  });

  /** The rejection of `call`, which must be one. */
  async function rejection(call: Promise<unknown>): Promise<unknown> {
    return call.then(
      (value) => {
        throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
      },
      (error: unknown) => error,
    );
  }

  it('rejects with Error404 carrying Gr4vy’s code, for an unknown buyer and for a malformed id', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const error = await rejection(gr4vy.buyers.get(id));
      expect(error).toBeInstanceOf(errors.Error404);
      expect(error).toMatchObject({ statusCode: 404, code: 'not_found', status: 404, type: 'error' });
      expect((error as errors.Error404).message).toMatch(/buyer/i);
      expect((error as errors.Error404).contentType).toMatch(/^application\/json/);
    }
  });

  it('rejects with Error400 whose details point at the field (a JSON pointer)', async () => {
    const error = await rejection(gr4vy.buyers.create({ displayName: 'x'.repeat(201) }));
    expect(error).toBeInstanceOf(errors.Error400);
    expect(error).toMatchObject({
      code: 'bad_request',
      details: [{ location: 'body', pointer: '/display_name', type: 'validation-failed' }],
    });
    expect((error as errors.Error400).details![0].message).toMatch(/200/);
  });

  it('rejects with Error401 for a key the service does not know, Error403 for a missing scope', async () => {
    const stranger = generateKeyPairSync('ec', { namedCurve: 'secp521r1' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const unknownKey = checkedGr4vy(t.url, {
      merchantAccountId: merchant,
      bearerAuth: withToken({ privateKey: stranger }),
    });
    const unauthorized = await rejection(unknownKey.buyers.get(randomUUID()));
    expect(unauthorized).toBeInstanceOf(errors.Error401);
    expect(unauthorized).toMatchObject({ code: 'unauthorized', status: 401 });

    const readOnly = checkedGr4vy(t.url, {
      merchantAccountId: merchant,
      bearerAuth: withToken({ privateKey, scopes: [JWTScope.BuyersRead] }),
    });
    const forbidden = await rejection(readOnly.buyers.create({ displayName: 'Not allowed' }));
    expect(forbidden).toBeInstanceOf(errors.Error403);
    expect(forbidden).toMatchObject({ code: 'forbidden', status: 403 });
    expect((forbidden as errors.Error403).message).toContain('buyers.write');
  });

  it('rejects with Error409 for a repeated external identifier', async () => {
    const externalIdentifier = `dup-${randomUUID().slice(0, 8)}`;
    await gr4vy.buyers.create({ displayName: 'First', externalIdentifier });
    const error = await rejection(gr4vy.buyers.create({ displayName: 'Second', externalIdentifier }));
    expect(error).toBeInstanceOf(errors.Error409);
    expect(error).toMatchObject({
      code: 'duplicate_record',
      status: 409,
      details: [{ location: 'body', pointer: '/external_identifier', type: 'buyer-external-identifier-exists' }],
    });
  });

  it('answers RFC 9457 to a client that asks for problem+json, sends */* or no Accept; Gr4vy’s body to application/json', async () => {
    const token = await getToken({ privateKey });
    const path = `/buyers/${randomUUID()}`;
    const headers = { 'x-merchant-account-id': merchant };
    for (const accept of [
      'application/problem+json',
      '*/*',
      'application/json, application/problem+json',
      'application/*',
      'application/json;q=0.5, application/problem+json',
      'text/html, application/json;q=0.9, */*;q=0.95',
    ]) {
      const answer = await http(t.url, path, { token, headers: { ...headers, accept } });
      expect({ accept, type: answer.headers.get('content-type') }).toEqual({
        accept,
        type: expect.stringMatching(/^application\/problem\+json/),
      });
      expectProblem(answer, 404, 'buyer-not-found');
    }
    const noAccept = await checkedFetch(t.url, path, { headers: { ...headers, authorization: `Bearer ${token}` } });
    // fetch adds `accept: */*` of its own; a raw request without any is in errors.e2e-spec.ts.
    expect(noAccept.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    for (const accept of [
      'application/json',
      'application/json, */*;q=0.8',
      'application/problem+json;q=0.1, application/json',
    ]) {
      const answer = await http(t.url, path, { token, headers: { ...headers, accept } });
      expect({ accept, type: answer.headers.get('content-type') }).toEqual({
        accept,
        type: expect.stringMatching(/^application\/json/),
      });
      expect(answer.body).toEqual({
        type: 'error',
        code: 'not_found',
        status: 404,
        message: expect.stringMatching(/buyer/i),
        details: [],
      });
    }
  });

  it('forwards with a token made with the SDK’s vault-forward.write scope; vault-forward.read reads the records', async () => {
    const forwarding = await createForwardingMerchant(t, downstream.port, 'SDK scopes');
    const key = (await createApiKey(t, forwarding.id)).privateKeyPem;
    const write = await getToken({ privateKey: key, scopes: [JWTScope.VaultForwardWrite] });
    const read = await getToken({ privateKey: key, scopes: [JWTScope.VaultForwardRead] });
    const forward = (token: string) =>
      http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          'x-vault-forward-url': `${downstream.url}/sdk-scope`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': forwarding.card.id,
          'content-type': 'application/json',
        },
        rawBody: '{"number":"{{ CARD_NUMBER_1 }}"}',
      });
    const before = downstream.received.length;
    const sent = await forward(write);
    expect(sent.status).toBe(200);
    expect(downstream.received.length - before).toBe(1);
    expect(downstream.received.at(-1)!.body.toString()).toBe(`{"number":"${forwarding.card.number}"}`);

    // Each spelling grants its own action only.
    expectProblem(await forward(read), 403, 'forbidden');
    expect(downstream.received.length - before).toBe(1);
    const records = await http(t.url, '/vault-forward/requests', { token: read });
    expect(records.status).toBe(200);
    expect(records.body.items.map((r: { id: string }) => r.id)).toContain(
      sent.headers.get('x-vault-forward-request-id'),
    );
    expectProblem(await http(t.url, '/vault-forward/requests', { token: write }), 403, 'forbidden');
    // Neither reaches the configs, which the SDK scopes as vault-forward-configs.*.
    expectProblem(await http(t.url, '/vault-forward/configs', { token: read }), 403, 'forbidden');
  });
});
