import { ForwardRecordsService } from '../../src/modules/forwarding/records/forward-records.service';
import { createApiKey } from '../factories/api-keys';
import { cardNumber } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * Issue 12, items 1 and 2: the fields and filters the Gr4vy SDK needs on payment methods, a buyer's
 * cards at GET /buyers/payment-methods, and usage counted by the forward-record batch writer.
 */
describe('Payment methods: Gr4vy fields, filters, a buyer’s cards and usage', () => {
  let t: TestApp;
  let downstream: Downstream;
  let merchant: string;
  let token: string;
  let otherToken: string;

  beforeAll(async () => {
    downstream = await startHttpDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    otherToken = await (await createApiKey(t, (await createMerchantAccount(t)).id)).token();
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Usage downstream', hosts: [`127.0.0.1:${downstream.port}`], methods: ['POST'] },
    });
    expect(config.status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await downstream.close();
  });

  const buyer = async (externalIdentifier: string) =>
    (
      await http(t.url, '/buyers', {
        method: 'POST',
        token,
        body: { display_name: 'Holder', external_identifier: externalIdentifier },
      })
    ).body;
  const store = async (body: Record<string, unknown>, as = token) =>
    http(t.url, '/payment-methods', {
      method: 'POST',
      token: as,
      body: { method: 'card', number: cardNumber(), expiration_date: '12/30', ...body },
    });
  const listIds = async (query: string) => {
    const result = await http(t.url, `/payment-methods?${query}`, { token });
    expect(result.status).toBe(200);
    return result.body.items.map((pm: { id: string }) => pm.id);
  };
  const forward = (cards: string[], url = `${downstream.url}/charge`) =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': url,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': cards.join(','),
        'content-type': 'application/json',
      },
      rawBody: JSON.stringify({ numbers: cards.map((_, i) => `{{ CARD_NUMBER_${i + 1} }}`) }),
    });
  const card = async (id: string) => (await http(t.url, `/payment-methods/${id}`, { token })).body;

  describe('fields', () => {
    it('shows the BIN only for numbers of 15 digits or more', async () => {
      const long = cardNumber('4', 19);
      const amex = cardNumber('34', 15);
      const diners = cardNumber('36', 14);
      expect((await store({ number: long })).body.details).toEqual({ bin: long.slice(0, 6), card_type: null });
      expect((await store({ number: amex })).body.details).toEqual({ bin: amex.slice(0, 6), card_type: null });
      const short = await store({ number: diners });
      expect(short.body.details).toEqual({ bin: null, card_type: null });
      const [row] = await t.db.query('SELECT bin FROM payment_methods WHERE id = $1', [short.body.id]);
      expect(row.bin).toBeNull();
    });
  });

  describe('create with buyer_external_identifier', () => {
    it('stores the card for the buyer of this merchant with that identifier', async () => {
      const b = await buyer('ext-create-1');
      const created = await store({ buyer_external_identifier: 'ext-create-1' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ buyer_id: b.id, buyer: b });
    });

    it('404 buyer-not-found naming the field when no buyer of this merchant has it (another merchant’s does not count)', async () => {
      await buyer('ext-only-in-a');
      const cards = async () =>
        (
          await t.db.query('SELECT count(*)::int AS count FROM payment_methods WHERE merchant_account_id = $1', [
            merchant,
          ])
        )[0].count;
      const before = await cards();
      const missing = await store({ buyer_external_identifier: 'ext-nobody' });
      expect(expectProblem(missing, 404, 'buyer-not-found').errors).toEqual([
        { location: 'body', name: 'buyer_external_identifier', message: expect.any(String) },
      ]);
      expect(await cards()).toBe(before);
      expectProblem(await store({ buyer_external_identifier: 'ext-only-in-a' }, otherToken), 404, 'buyer-not-found');
    });

    it('400 naming buyer_external_identifier when buyer_id is given too', async () => {
      const b = await buyer('ext-both');
      const both = await store({ buyer_id: b.id, buyer_external_identifier: 'ext-both' });
      expect(expectProblem(both, 400, 'validation-failed').errors).toEqual([
        { location: 'body', name: 'buyer_external_identifier', message: 'must not be given together with buyer_id' },
      ]);
    });
  });

  describe('list filters', () => {
    let b: { id: string };
    let ids: string[];

    beforeAll(async () => {
      b = await buyer('ext-filters');
      ids = [];
      for (let i = 0; i < 3; i++)
        ids.push((await store({ buyer_id: b.id, external_identifier: `filters-pm-${i % 2}` })).body.id);
      await store({ external_identifier: 'filters-pm-0' }); // no buyer
    });

    it('buyer_id, buyer_external_identifier, external_identifier and status, alone and together', async () => {
      const newestFirst = [...ids].reverse();
      expect(await listIds(`buyer_id=${b.id}`)).toEqual(newestFirst);
      expect(await listIds('buyer_external_identifier=ext-filters')).toEqual(newestFirst);
      expect(await listIds('buyer_external_identifier=ext-nobody')).toEqual([]);
      expect(await listIds('buyer_external_identifier=ext-filters&external_identifier=filters-pm-0')).toEqual([
        ids[2],
        ids[0],
      ]);
      expect((await listIds('external_identifier=filters-pm-0')).length).toBe(3);
      expect(await listIds(`buyer_id=${b.id}&status=succeeded`)).toEqual(newestFirst);
      expect(await listIds(`buyer_id=${b.id}&status=failed&status=succeeded`)).toEqual(newestFirst);
      expect(await listIds(`buyer_id=${b.id}&status=processing&status=failed`)).toEqual([]);
    });

    it('refuses an unknown status, naming it', async () => {
      const result = await http(t.url, '/payment-methods?status=succeeded&status=bogus', { token });
      expect(expectProblem(result, 400, 'validation-failed').errors).toEqual([
        { location: 'query', name: 'status', message: expect.stringContaining('succeeded') },
      ]);
    });

    it('pages with the filters, and a cursor is bound to them', async () => {
      const first = await http(
        t.url,
        '/payment-methods?buyer_external_identifier=ext-filters&status=succeeded&limit=2',
        { token },
      );
      expect(first.body.items.map((pm: { id: string }) => pm.id)).toEqual([ids[2], ids[1]]);
      const cursor = encodeURIComponent(first.body.next_cursor);
      const second = await http(
        t.url,
        `/payment-methods?buyer_external_identifier=ext-filters&status=succeeded&limit=2&cursor=${cursor}`,
        { token },
      );
      expect(second.body.items.map((pm: { id: string }) => pm.id)).toEqual([ids[0]]);
      // The same statuses in another order are the same filter.
      const reordered = await http(
        t.url,
        `/payment-methods?buyer_external_identifier=ext-filters&status=succeeded&status=succeeded&limit=2&cursor=${cursor}`,
        { token },
      );
      expect(reordered.status).toBe(200);
      for (const changed of [
        'buyer_external_identifier=ext-other&status=succeeded',
        'buyer_external_identifier=ext-filters',
        'buyer_external_identifier=ext-filters&status=succeeded&external_identifier=x',
      ]) {
        expectProblem(
          await http(t.url, `/payment-methods?${changed}&limit=2&cursor=${cursor}`, { token }),
          400,
          'invalid-cursor',
        );
      }
    });
  });

  describe('GET /buyers/payment-methods', () => {
    it('is not read as GET /buyers/{id}', async () => {
      const b = await buyer('ext-route');
      const result = await http(t.url, `/buyers/payment-methods?buyer_id=${b.id}`, { token });
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ items: [] });
    });

    it('needs exactly one of buyer_id and buyer_external_identifier', async () => {
      const b = await buyer('ext-one-of');
      for (const query of ['', `?buyer_id=${b.id}&buyer_external_identifier=ext-one-of`]) {
        const result = await http(t.url, `/buyers/payment-methods${query}`, { token });
        expect(expectProblem(result, 400, 'validation-failed').errors.map((e: { name: string }) => e.name)).toEqual([
          'buyer_id',
          'buyer_external_identifier',
        ]);
      }
    });

    it('404 buyer-not-found naming the parameter for an unknown buyer or another merchant’s', async () => {
      const b = await buyer('ext-foreign');
      const unknownId = await http(t.url, '/buyers/payment-methods?buyer_id=00000000-0000-4000-8000-000000000000', {
        token,
      });
      expect(expectProblem(unknownId, 404, 'buyer-not-found').errors).toEqual([
        { location: 'query', name: 'buyer_id', message: expect.any(String) },
      ]);
      expectProblem(
        await http(t.url, `/buyers/payment-methods?buyer_id=${b.id}`, { token: otherToken }),
        404,
        'buyer-not-found',
      );
      const unknownExternal = await http(t.url, '/buyers/payment-methods?buyer_external_identifier=ext-foreign', {
        token: otherToken,
      });
      expect(expectProblem(unknownExternal, 404, 'buyer-not-found').errors[0].name).toBe('buyer_external_identifier');
    });

    it('refuses sort_by and order_by values it does not know, and query parameters it does not have', async () => {
      const b = await buyer('ext-bad-sort');
      for (const [query, name] of [
        ['sort_by=created_at', 'sort_by'],
        ['order_by=up', 'order_by'],
        ['country=US', 'country'],
      ]) {
        const result = await http(t.url, `/buyers/payment-methods?buyer_id=${b.id}&${query}`, { token });
        expect(expectProblem(result, 400, 'validation-failed').errors[0].name).toBe(name);
      }
    });
  });

  describe('usage_count and last_used_at', () => {
    it('count forwards that released the card, written by the batch writer; refused forwards do not count', async () => {
      const b = await buyer('ext-usage');
      const [a, c, unused] = await Promise.all([1, 2, 3].map(async () => (await store({ buyer_id: b.id })).body));
      // Created in parallel: their creation order is whatever the database made it.
      const byCreation = (await http(t.url, `/buyers/payment-methods?buyer_id=${b.id}`, { token })).body.items.map(
        (pm: { id: string }) => pm.id,
      );

      expect((await forward([a.id])).status).toBe(200);
      const once = await waitFor(
        async () => {
          const pm = await card(a.id);
          return pm.usage_count === 1 && pm;
        },
        { what: 'the first use counted' },
      );
      const [record] = await t.db.query(
        'SELECT created_at FROM vault_forward_requests WHERE $1 = ANY(payment_method_ids) AND status = 200',
        [a.id],
      );
      expect(once.last_used_at).toBe(record.created_at.toISOString());
      expect(once.updated_at).toBe(a.updated_at); // usage is not an update of the card

      expect((await forward([a.id, c.id])).status).toBe(200);
      expect((await forward([c.id])).status).toBe(200);
      await waitFor(async () => (await card(a.id)).usage_count === 2 && (await card(c.id)).usage_count === 2, {
        what: 'both cards counted',
      });

      // Refused before any card data left (the target is not enabled): named in its record, not counted.
      const refused = await forward([a.id], 'http://127.0.0.1:1/not-enabled');
      expect(refused.status).toBeGreaterThanOrEqual(400);
      await waitFor(
        async () => {
          const [row] = await t.db.query(
            'SELECT status FROM vault_forward_requests WHERE $1 = ANY(payment_method_ids) AND target_url LIKE $2',
            [a.id, '%not-enabled'],
          );
          return row?.status !== null && row?.status !== undefined;
        },
        { what: 'the refused forward’s record' },
      );
      await t.get(ForwardRecordsService).flush();
      expect((await card(a.id)).usage_count).toBe(2);
      expect((await card(unused.id)).usage_count).toBe(0);

      // The last forward used c alone: c is the most recently used, then a, then the never-used card.
      const recent = (
        await http(t.url, `/buyers/payment-methods?buyer_id=${b.id}&sort_by=last_used_at&order_by=desc`, { token })
      ).body.items;
      expect(recent.map((pm: { id: string }) => pm.id)).toEqual([c.id, a.id, unused.id]);
      expect(recent[0]).toMatchObject({
        usage_count: 2,
        last_used_at: (await card(c.id)).last_used_at,
        has_replacement: false,
        cit_usage_count: 0,
      });
      const leastRecent = (
        await http(t.url, `/buyers/payment-methods?buyer_id=${b.id}&sort_by=last_used_at&order_by=asc`, { token })
      ).body.items;
      expect(leastRecent.map((pm: { id: string }) => pm.id)).toEqual([unused.id, a.id, c.id]);
      // Without sort_by: creation order.
      const created = (await http(t.url, `/buyers/payment-methods?buyer_id=${b.id}`, { token })).body.items.map(
        (pm: { id: string }) => pm.id,
      );
      expect(created).toEqual(byCreation);
      expect(
        (await http(t.url, `/buyers/payment-methods?buyer_id=${b.id}&order_by=asc`, { token })).body.items.map(
          (pm: { id: string }) => pm.id,
        ),
      ).toEqual([...byCreation].reverse());
    });

    it('a record written again (a spool replay, a retried batch) counts once', async () => {
      const pm = (await store({})).body;
      const records = t.get(ForwardRecordsService);
      const record = {
        id: `replayed-${pm.id}`,
        merchantAccountId: merchant,
        configId: null,
        method: 'POST',
        targetUrl: `${downstream.url}/charge`,
        status: 200,
        durationMs: 1,
        paymentMethodIds: [pm.id],
        authenticationIds: [],
        errorType: null,
        spooledAt: '2026-11-20T09:14:03.123456+00:00',
        disclosed: true,
      };
      // Once as a record the table has not seen (the upsert), then as one this process thinks it
      // disclosed to the table (the outcome UPDATE): neither may count the finished row again.
      for (let i = 0; i < 3; i++) {
        records.write({ ...record, disclosedInTable: i > 0 });
        await records.flush();
      }
      const counted = await card(pm.id);
      expect(counted.usage_count).toBe(1);
      expect(counted.last_used_at).toBe('2026-11-20T09:14:03.123456+00:00');
      // A record of a forward that released nothing counts nothing.
      records.write({ ...record, id: `refused-${pm.id}`, status: 400, disclosed: false });
      await records.flush();
      expect((await card(pm.id)).usage_count).toBe(1);
      // A deleted card is simply not found by the count.
      await http(t.url, `/payment-methods/${pm.id}`, { method: 'DELETE', token });
      records.write({ ...record, id: `after-delete-${pm.id}` });
      await records.flush();
      const [row] = await t.db.query('SELECT status FROM vault_forward_requests WHERE id = $1', [
        `after-delete-${pm.id}`,
      ]);
      expect(row.status).toBe(200);
    });
  });
});
