import { createApiKey } from '../factories/api-keys';
import { cardNumber } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

const MICROS_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

describe('Payment methods (cards in the vault)', () => {
  let t: TestApp;
  let merchantA: string;
  let merchantB: string;
  let tokenA: string;
  let tokenB: string;

  beforeAll(async () => {
    t = await startTestApp();
    merchantA = (await createMerchantAccount(t)).id;
    merchantB = (await createMerchantAccount(t)).id;
    tokenA = await (await createApiKey(t, merchantA)).token();
    tokenB = await (await createApiKey(t, merchantB)).token();
  });
  afterAll(() => t.close());

  const store = (token: string, body: Record<string, unknown>) =>
    http(t.url, '/payment-methods', { method: 'POST', token, body });
  const card = (overrides: Record<string, unknown> = {}) => ({
    method: 'card',
    number: cardNumber(),
    expiration_date: '07/31',
    ...overrides,
  });

  it('stores, gets, lists and deletes a card; the number never comes back', async () => {
    const number = cardNumber('4', 16);
    const spaced = number.replace(/(\d{4})/g, '$1 ').trim();
    const buyer = (
      await http(t.url, '/buyers', { method: 'POST', token: tokenA, body: { display_name: 'Card owner' } })
    ).body;
    const created = await store(
      tokenA,
      card({ number: spaced, buyer_id: buyer.id, external_identifier: 'card-ext-1', cardholder_name: 'Ada Lovelace' }),
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      type: 'payment-method',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      merchant_account_id: merchantA,
      method: 'card',
      scheme: 'visa',
      label: number.slice(-4),
      expiration_date: '07/31',
      fingerprint: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      details: { bin: number.slice(0, 6), card_type: null },
      usage_count: 0,
      last_used_at: null,
      cit_usage_count: 0,
      has_replacement: false,
      status: 'succeeded',
      buyer_id: buyer.id,
      buyer,
      external_identifier: 'card-ext-1',
      created_at: expect.stringMatching(MICROS_ISO),
      updated_at: expect.stringMatching(MICROS_ISO),
    });
    expect(created.text).not.toContain(number.slice(-12));
    expect(created.text).not.toContain('Ada Lovelace');
    // Absence proves something only once this request's line is in.
    await waitFor(() => t.logs.requestLine(created.headers.get('x-request-id')!), { what: 'the request line' });
    expect(t.logs.text).not.toContain(number.slice(-12));
    expect(t.logs.text).not.toContain('Ada Lovelace');

    const fetched = await http(t.url, `/payment-methods/${created.body.id}`, { token: tokenA });
    expect(fetched.body).toEqual(created.body);

    const listed = await http(t.url, `/payment-methods?buyer_id=${buyer.id}`, { token: tokenA });
    expect(listed.body.items).toEqual([created.body]);
    expect(listed.text).not.toContain(number.slice(-12));

    const deleted = await http(t.url, `/payment-methods/${created.body.id}`, { method: 'DELETE', token: tokenA });
    expect(deleted.status).toBe(204);
    expectProblem(
      await http(t.url, `/payment-methods/${created.body.id}`, { token: tokenA }),
      404,
      'payment-method-not-found',
    );
    const [{ count }] = await t.db.query('SELECT count(*)::int AS count FROM payment_methods WHERE id = $1', [
      created.body.id,
    ]);
    expect(count).toBe(0);
  });

  it('fingerprints are stable within a merchant and differ between merchants', async () => {
    const number = cardNumber('55', 16);
    const a1 = (await store(tokenA, card({ number }))).body;
    const a2 = (
      await store(tokenA, card({ number: number.replace(/(\d{4})/g, '$1-').slice(0, -1), expiration_date: '01/29' }))
    ).body;
    const b1 = (await store(tokenB, card({ number }))).body;
    expect(a1.fingerprint).toBe(a2.fingerprint);
    expect(b1.fingerprint).not.toBe(a1.fingerprint);
    expect(a1.scheme).toBe('mastercard');
  });

  describe('refuses bad cards with 400 naming the field, never echoing the number (body or log)', () => {
    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['bad Luhn', { number: '4111111111111112' }, 'number'],
      ['11 digits', { number: '41111111113' }, 'number'],
      ['20 digits', { number: '41111111111111111113' }, 'number'],
      ['letters', { number: '4111abcd11111111' }, 'number'],
      ['month 13', { expiration_date: '13/30' }, 'expiration_date'],
      ['month 00', { expiration_date: '00/30' }, 'expiration_date'],
      ['long year', { expiration_date: '12/2030' }, 'expiration_date'],
      ['another method', { method: 'bank-account' }, 'method'],
      ['a security code', { security_code: '123' }, 'security_code'],
      ['a malformed buyer id', { buyer_id: 'nope' }, 'buyer_id'],
    ];
    it.each(bad)('%s', async (_label, overrides, field) => {
      const body = card(overrides);
      const result = await store(tokenA, body);
      const problem = expectProblem(result, 400, 'validation-failed');
      expect(problem.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ location: 'body', name: field })]),
      );
      const digits = String(body.number).replace(/\D/g, '');
      expect(result.text).not.toContain(digits.slice(-12));
      expect(result.text).not.toContain(String(body.number));
      await waitFor(() => t.logs.requestLine(result.headers.get('x-request-id')!), { what: 'the request line' });
      expect(t.logs.text).not.toContain(digits.slice(-12));
    });
  });

  it('refuses a buyer_id of another merchant account', async () => {
    const foreignBuyer = (
      await http(t.url, '/buyers', { method: 'POST', token: tokenB, body: { display_name: 'B’s buyer' } })
    ).body;
    const problem = expectProblem(await store(tokenA, card({ buyer_id: foreignBuyer.id })), 400, 'validation-failed');
    expect(problem.errors).toEqual([expect.objectContaining({ location: 'body', name: 'buyer_id' })]);
  });

  it('isolates merchants: B cannot get, delete or list A’s card', async () => {
    const mine = (await store(tokenA, card())).body;
    expectProblem(await http(t.url, `/payment-methods/${mine.id}`, { token: tokenB }), 404, 'payment-method-not-found');
    expectProblem(
      await http(t.url, `/payment-methods/${mine.id}`, { method: 'DELETE', token: tokenB }),
      404,
      'payment-method-not-found',
    );
    const list = await http(t.url, '/payment-methods?limit=100', { token: tokenB });
    expect(list.body.items.map((p: { id: string }) => p.id)).not.toContain(mine.id);
    expect((await http(t.url, `/payment-methods/${mine.id}`, { token: tokenA })).status).toBe(200);
  });

  it('pages with the shared cursor pagination, filtered by buyer', async () => {
    const buyer = (
      await http(t.url, '/buyers', { method: 'POST', token: tokenA, body: { display_name: 'Many cards' } })
    ).body;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.unshift((await store(tokenA, card({ buyer_id: buyer.id }))).body.id);
    const first = await http(t.url, `/payment-methods?buyer_id=${buyer.id}&limit=2`, { token: tokenA });
    const second = await http(
      t.url,
      `/payment-methods?buyer_id=${buyer.id}&limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      { token: tokenA },
    );
    const third = await http(
      t.url,
      `/payment-methods?buyer_id=${buyer.id}&limit=2&cursor=${encodeURIComponent(second.body.next_cursor)}`,
      { token: tokenA },
    );
    expect([...first.body.items, ...second.body.items, ...third.body.items].map((p: { id: string }) => p.id)).toEqual(
      ids,
    );
    expect(third.body.next_cursor).toBeNull();
    // The cursor is bound to the buyer filter.
    expectProblem(
      await http(t.url, `/payment-methods?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`, {
        token: tokenA,
      }),
      400,
      'invalid-cursor',
    );
  });

  it('deleting a buyer deletes its cards', async () => {
    const buyer = (await http(t.url, '/buyers', { method: 'POST', token: tokenA, body: { display_name: 'Leaving' } }))
      .body;
    const pm = (await store(tokenA, card({ buyer_id: buyer.id }))).body;
    await http(t.url, `/buyers/${buyer.id}`, { method: 'DELETE', token: tokenA });
    expectProblem(await http(t.url, `/payment-methods/${pm.id}`, { token: tokenA }), 404, 'payment-method-not-found');
  });

  it('needs payment-methods scopes', async () => {
    const key = await createApiKey(t, merchantA);
    expectProblem(await store(await key.token(['payment-methods.read']), card()), 403, 'forbidden');
    expectProblem(await http(t.url, '/payment-methods', { token: await key.token(['buyers.read']) }), 403, 'forbidden');
  });
});
