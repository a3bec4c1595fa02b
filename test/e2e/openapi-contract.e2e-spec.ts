import createClient, { Middleware } from 'openapi-fetch';
import { openApiDocumentOffline } from '../../src/app/openapi-document';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import type { paths } from '../generated/openapi';
import { Contract, ContractViolation, contractOf, contractStats } from '../support/contract';
import { http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

describe('The OpenAPI document as a contract', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp();
    const merchant = await createMerchantAccount(t);
    token = await (await createApiKey(t, merchant.id)).token();
  });
  afterAll(() => t.close());

  it('is served exactly as it is built offline (what the lint and the generated client read)', async () => {
    const served = (await http(t.url, '/openapi.json')).body;
    expect(served).toEqual(JSON.parse(JSON.stringify(await openApiDocumentOffline())));
  });

  it('drives create, cursor-paged list and get of buyers through a client generated from it', async () => {
    const client = createClient<paths>({ baseUrl: t.url, headers: { authorization: `Bearer ${token}` } });
    // The client's own answers are held against the document too.
    const contract = (await contractOf(t.url))!;
    const check: Middleware = {
      async onResponse({ request, response }) {
        const url = new URL(request.url);
        contract.check({
          method: request.method,
          target: url.pathname + url.search,
          status: response.status,
          headers: response.headers,
          text: await response.clone().text(),
        });
      },
    };
    client.use(check);

    const created: string[] = [];
    for (const n of [1, 2, 3]) {
      const { data, error, response } = await client.POST('/buyers', {
        body: { display_name: `Client buyer ${n}`, external_identifier: `client-${n}` },
      });
      expect(error).toBeUndefined();
      expect(response.status).toBe(201);
      // Typed by the generated paths: a BuyerResponse, with its literal `type`.
      const type: 'buyer' = data!.type;
      expect(type).toBe('buyer');
      expect(data!.external_identifier).toBe(`client-${n}`);
      created.push(data!.id);
    }

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { data, error } = await client.GET('/buyers', {
        params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } },
      });
      expect(error).toBeUndefined();
      expect(data!.limit).toBe(2);
      seen.push(...data!.items.map((b) => b.id));
      cursor = data!.next_cursor ?? undefined;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(2);
    expect(seen).toEqual([...created].reverse());

    const { data: one } = await client.GET('/buyers/{id}', { params: { path: { id: created[0] } } });
    expect(one).toMatchObject({ id: created[0], display_name: 'Client buyer 1', external_identifier: 'client-1' });

    // Problems are typed too: the 404's code is one the document lists for this route.
    const missing = await client.GET('/buyers/{id}', {
      params: { path: { id: '00000000-0000-4000-8000-000000000000' } },
    });
    expect(missing.response.status).toBe(404);
    const code: string | undefined = missing.error?.code;
    expect(code).toBe('buyer-not-found');
  });

  it('fails an answer whose status, content type or body the document does not declare', async () => {
    const contract = (await contractOf(t.url))!;
    const json = new Headers({ 'content-type': 'application/json; charset=utf-8' });
    const problem = new Headers({ 'content-type': 'application/problem+json' });
    const buyer = {
      type: 'buyer',
      id: '00000000-0000-4000-8000-000000000000',
      merchant_account_id: 'default',
      display_name: 'A',
      external_identifier: null,
      created_at: '2026-11-20T09:14:03.123456+00:00',
      updated_at: '2026-11-20T09:14:03.123456+00:00',
    };
    const answer =
      (status: number, headers: Headers, body: unknown, target = '/buyers/00000000-0000-4000-8000-000000000000') =>
      () =>
        contract.check({ method: 'GET', target, status, headers, text: JSON.stringify(body) });

    expect(answer(200, json, buyer)).not.toThrow();
    expect(answer(418, json, buyer)).toThrow(/answered 418, which the document does not declare/);
    expect(answer(200, problem, buyer)).toThrow(/application\/problem\+json/);
    expect(answer(200, json, { ...buyer, external_identifier: 42 })).toThrow(ContractViolation);
    expect(answer(200, json, { ...buyer, created_at: 'yesterday' })).toThrow(/format/);
    expect(answer(200, json, { ...buyer, card_number: '4111111111111111' })).toThrow(/additional/);
    const notFound = {
      type: '/errors/buyer-not-found',
      title: 'Buyer not found',
      status: 404,
      detail: 'x',
      code: 'buyer-not-found',
    };
    expect(answer(404, problem, notFound)).not.toThrow();
    // A code the route does not list for that status is a mismatch as well.
    expect(answer(404, problem, { ...notFound, code: 'api-key-not-found' })).toThrow(/allowed values/);
    // Undocumented paths may only be refused.
    expect(answer(200, json, {}, '/nowhere')).toThrow(/no operation/);
    expect(
      answer(
        404,
        problem,
        {
          type: '/errors/route-not-found',
          title: 'Route not found',
          status: 404,
          detail: 'x',
          code: 'route-not-found',
        },
        '/nowhere',
      ),
    ).not.toThrow();
    expect(contractStats.checked).toBeGreaterThan(10);
  });

  it('is a Contract built from any document, so test-only routes are held to theirs', () => {
    const contract = new Contract({
      openapi: '3.1.0',
      paths: { '/x': { get: { responses: { '204': { description: 'none' } } } } },
      components: { schemas: {} },
    });
    expect(() =>
      contract.check({ method: 'GET', target: '/x', status: 204, headers: new Headers(), text: '' }),
    ).not.toThrow();
    expect(() =>
      contract.check({ method: 'GET', target: '/x', status: 204, headers: new Headers(), text: 'surprise' }),
    ).toThrow(/with a body/);
  });
});
