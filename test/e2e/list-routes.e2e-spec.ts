import { CursorCodec, CursorScope } from '../../src/platform/pagination/cursor';
import { createApiKey } from '../factories/api-keys';
import { createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { LedgerSealer } from '../../src/modules/forwarding/ledger/ledger-sealer';

interface Envelope {
  items: Array<{ id?: string; seq?: number }>;
  limit: number;
  next_cursor: string | null;
  previous_cursor: string | null;
}

interface Parameter {
  name: string;
  in: string;
  schema?: { minimum?: number; maximum?: number; default?: number };
}

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
}

interface Operation {
  summary?: string;
  parameters?: Parameter[];
  responses?: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema?: Schema }> }>;
}

/**
 * Every list of the service, and what its cursors were bound to before the PaginationInterceptor
 * (endpoint name, merchant account, filters): a cursor issued then must still be accepted.
 */
const LISTS: Record<string, { instance?: boolean; binding: (ids: Ids) => CursorScope }> = {
  '/api-keys': { binding: (ids) => ({ endpoint: 'api-keys', merchantAccountId: ids.merchant, filters: {} }) },
  '/buyers': { binding: (ids) => ({ endpoint: 'buyers', merchantAccountId: ids.merchant, filters: {} }) },
  '/merchant-accounts': {
    instance: true,
    binding: () => ({ endpoint: 'merchant-accounts', merchantAccountId: null, filters: {} }),
  },
  '/payment-methods': {
    binding: (ids) => ({ endpoint: 'payment-methods', merchantAccountId: ids.merchant, filters: {} }),
  },
  '/vault-forward/configs': {
    binding: (ids) => ({ endpoint: 'vault-forward-configs', merchantAccountId: ids.merchant, filters: {} }),
  },
  '/vault-forward/configs/{config_id}/authentications': {
    binding: (ids) => ({
      endpoint: 'vault-forward-authentications',
      merchantAccountId: ids.merchant,
      filters: { config_id: ids.config },
    }),
  },
  '/vault-forward/inbound-requests': {
    binding: (ids) => ({ endpoint: 'vault-forward-inbound-requests', merchantAccountId: ids.merchant, filters: {} }),
  },
  '/vault-forward/inbound-routes': {
    binding: (ids) => ({ endpoint: 'vault-forward-inbound-routes', merchantAccountId: ids.merchant, filters: {} }),
  },
  '/vault-forward/jobs': {
    binding: (ids) => ({ endpoint: 'vault-forward-jobs', merchantAccountId: ids.merchant, filters: {} }),
  },
  '/vault-forward/ledger/heads': {
    binding: (ids) => ({ endpoint: 'vault-forward-ledger-heads', merchantAccountId: ids.merchant, filters: {} }),
  },
  '/vault-forward/requests': {
    binding: (ids) => ({ endpoint: 'vault-forward-requests', merchantAccountId: ids.merchant, filters: {} }),
  },
  '/vault-forward/webhook-secrets': {
    binding: (ids) => ({ endpoint: 'vault-forward-webhook-secrets', merchantAccountId: ids.merchant, filters: {} }),
  },
};

/**
 * The GET routes that answer a list whole, not page by page, each with why (issue 21: every other list goes through
 * the PaginationInterceptor). `data`: a list of stored rows, whose OpenAPI summary must say it is not paginated; the
 * others are the service's own fixed catalogs.
 */
const WHOLE_LISTS: Record<string, { why: string; data: boolean }> = {
  '/buyers/payment-methods': {
    why: "the SDK's response (PaymentMethodSummaries) has no cursor; at most 100 cards, all on GET /payment-methods",
    data: true,
  },
  '/payment-methods/{payment_method_id}/network-tokens': {
    why: 'a card keeps few network tokens (one per token requestor): at most 20',
    data: true,
  },
  '/vault-forward/definitions': {
    why: "the shipped catalog and the instance's own definitions: a small set",
    data: true,
  },
  '/vault-forward/authentication-kinds': { why: 'the fixed catalog of authentication kinds', data: false },
  '/errors': { why: 'the fixed catalog of problem types', data: false },
};

/** GET routes whose path names no single resource (no trailing `{id}`) yet answer no list. */
const NOT_LISTS: Record<string, string> = {
  '/vault-forward/activity': 'per-minute counts over a window of minutes (a time series, not a list of resources)',
  '/vault-forward/budget': 'one resource: the merchant account’s disclosure budget (decision 0134)',
  '/vault-forward/configs/{id}/budget': 'one resource: a config’s disclosure budget (decision 0134)',
  '/vault-forward/ledger/consistency': 'one proof: that one signed head’s tree starts the other’s (decision 0133)',
  '/vault-forward/requests/{id}/proof': 'one record’s ledger entries with their inclusion proofs (decision 0133)',
  '/health/live': 'a status',
  '/health/ready': 'a status',
  '/': 'the service’s index: where the dashboard and the docs are',
};

interface Ids {
  merchant: string;
  config: string;
}

describe('Every list route is served by the PaginationInterceptor (issue 21, item 1)', () => {
  let t: TestApp;
  let ids: Ids;
  let merchantToken: string;
  let instanceToken: string;
  let document: {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, Schema> };
  };
  let codec: CursorCodec;

  beforeAll(async () => {
    t = await startTestApp();
    codec = new CursorCodec(t.config.cursorSecret!);
    const merchant = (await createMerchantAccount(t)).id;
    await createMerchantAccount(t);
    // Two keys of the merchant, so /api-keys (as seen by a merchant key) has two pages at limit=1.
    merchantToken = await (await createApiKey(t, merchant)).token();
    await createApiKey(t, merchant);
    instanceToken = await (await createApiKey(t, null)).token();
    const post = async (path: string, body?: unknown) => {
      const result = await http(t.url, path, { method: 'POST', token: merchantToken, body });
      expect(result.status).toBe(201);
      return result.body as { id: string };
    };
    const configs = [];
    const inboundRoutes: Array<{ id: string }> = [];
    for (let i = 0; i < 2; i++) {
      await post('/buyers', { display_name: `Buyer ${i}` });
      await createCard(t, merchant);
      configs.push(await post('/vault-forward/configs', { display_name: `PSP ${i}`, hosts: ['psp.example'] }));
      await post('/vault-forward/webhook-secrets');
      inboundRoutes.push(
        await post('/vault-forward/inbound-routes', {
          display_name: `Partner ${i}`,
          upstream_url: 'https://merchant.example/inbound',
          caller_authentication: {
            kind: 'shared-secret',
            header: 'x-partner-key',
            secret: `partner-secret-${i}-0123456789`,
          },
        }),
      );
    }
    for (let i = 0; i < 2; i++) {
      await post(`/vault-forward/configs/${configs[0].id}/authentications`, {
        kind: 'hmac-signature',
        label: `Signing ${i}`,
        fields: {
          secret: 'an-hmac-secret-of-the-test-0123456789',
          algorithm: 'sha256',
          encoding: 'hex',
          header: 'x-signature',
        },
      });
    }
    // Records and jobs come from forwards; the list only reads rows, so rows are enough here.
    await t.db.query(
      `INSERT INTO vault_forward_requests (id, merchant_account_id, method, target_url, status, duration_ms, created_at)
       SELECT gen_random_uuid()::text, $1, 'POST', 'https://psp.example/x', 200, 12, now() - g * interval '1 second'
         FROM generate_series(1, 2) g`,
      [merchant],
    );
    await t.db.query(
      `INSERT INTO vault_forward_jobs (id, merchant_account_id, status, method, target_url, max_attempts, finished_at, created_at)
       SELECT gen_random_uuid(), $1, 'cancelled', 'POST', 'https://psp.example/x', 1, now(), now() - g * interval '1 second'
         FROM generate_series(1, 2) g`,
      [merchant],
    );
    await t.db.query(
      `INSERT INTO inbound_requests (id, merchant_account_id, route_id, request_id, caller, method, path, outcome, status, created_at)
       SELECT gen_random_uuid(), $1, $2, 'req-' || g, 'shared-secret', 'POST', '/', 'sent', 200, now() - g * interval '1 second'
         FROM generate_series(1, 2) g`,
      [merchant, inboundRoutes[0].id],
    );
    // Ledger heads come from seals: one entry at a time, each sealed (here, or by another process's sealer).
    for (let i = 0; i < 2; i++) {
      const [{ id }] = await t.db.query<Array<{ id: string }>>(
        `INSERT INTO vault_forward_ledger_entries (record_id, kind, merchant_account_id, payment_method_ids, fingerprints,
           authentication_ids, filled_fields)
         VALUES (gen_random_uuid()::text, 'outcome', $1, '{}', '{}', '{}', '{}') RETURNING id::text`,
        [merchant],
      );
      await waitFor(async () => {
        await t.get(LedgerSealer).sealAll();
        const [row] = await t.db.query<Array<{ sealed: boolean }>>(
          'SELECT leaf_index IS NOT NULL AS sealed FROM vault_forward_ledger_entries WHERE id = $1',
          [id],
        );
        return row.sealed;
      });
    }
    ids = { merchant, config: configs[0].id };
    document = (await http(t.url, '/openapi.json')).body;
  });
  afterAll(() => t.close());

  const tokenFor = (route: string) => (LISTS[route].instance ? instanceToken : merchantToken);
  const pathOf = (route: string) => route.replace('{config_id}', ids.config);
  const limitOf = (route: string) => document.paths[route].get.parameters!.find((p) => p.name === 'limit')!.schema!;
  const get = (route: string, target: string) => http<Envelope>(t.url, target, { token: tokenFor(route) });
  const linkOf = (header: string | null, rel: string) =>
    header
      ?.split(', ')
      .map((link) => /^<([^>]+)>; rel="([a-z]+)"$/.exec(link))
      .find((match) => match?.[2] === rel)?.[1];

  const resolve = (schema: Schema | undefined): Schema | undefined =>
    schema?.$ref ? document.components.schemas[schema.$ref.split('/').pop()!] : schema;
  const okSchema = (operation: Operation) =>
    resolve(operation.responses?.['200']?.content?.['application/json']?.schema);
  const gets = () =>
    Object.entries(document.paths)
      .filter(([, operations]) => operations.get)
      .map(([path, operations]) => [path, operations.get] as const);

  /*
   * Which GETs answer a list is found without asking the decorator (whose absence would also take away the cursor
   * and limit parameters and the page schema it documents): a GET whose path ends in a collection, not an `{id}`,
   * or whose 200 answer has an `items` array. Each must be a paginated list (LISTS), a list answered whole on purpose
   * (WHOLE_LISTS) or no list (NOT_LISTS): a list route added without @Paginated fails here until it is decided.
   */
  it('finds every list route independently of @Paginated: each is paginated, or answered whole with a reason', () => {
    const found = gets()
      .filter(([path, get]) => !/\/\{[^}]+\}$/.test(path) || okSchema(get)?.properties?.items?.type === 'array')
      .map(([path]) => path)
      .sort();
    expect(found).toEqual([...Object.keys(LISTS), ...Object.keys(WHOLE_LISTS), ...Object.keys(NOT_LISTS)].sort());
  });

  it('documents each paginated list as @Paginated does: cursor, limit, the page envelope and a Link header', () => {
    for (const route of Object.keys(LISTS)) {
      const get = document.paths[route].get;
      const query = (get.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      expect({ route, cursor: query.includes('cursor'), limit: query.includes('limit') }).toEqual({
        route,
        cursor: true,
        limit: true,
      });
      const page = okSchema(get);
      expect({ route, envelope: Object.keys(page?.properties ?? {}).sort() }).toEqual({
        route,
        envelope: ['items', 'limit', 'next_cursor', 'previous_cursor'],
      });
      expect({ route, link: Object.keys(get.responses?.['200']?.headers ?? {}) }).toEqual({ route, link: ['Link'] });
    }
  });

  it('the lists of stored rows answered whole say so in their summary', () => {
    for (const [route, { data }] of Object.entries(WHOLE_LISTS)) {
      const { summary, parameters } = document.paths[route].get;
      if (data)
        expect({ route, summary }).toEqual({ route, summary: expect.stringMatching(/not paginated|answered whole/) });
      expect({ route, cursor: (parameters ?? []).some((p) => p.name === 'cursor') }).toEqual({ route, cursor: false });
    }
  });

  it('the OpenAPI document offers cursor and limit on exactly the paginated lists', () => {
    const lists = gets()
      .filter(([, get]) => {
        const names = (get.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
        return names.includes('cursor') && names.includes('limit');
      })
      .map(([path]) => path)
      .sort();
    expect(lists).toEqual(Object.keys(LISTS).sort());
  });

  it('binds payment-method cursors to their filters in normal form, as before (UUID case, status as a set)', async () => {
    const buyer = (
      await http(t.url, '/buyers', { method: 'POST', token: merchantToken, body: { display_name: 'Carded' } })
    ).body.id as string;
    for (let i = 0; i < 2; i++) await createCard(t, ids.merchant, { buyer_id: buyer });
    const first = await get(
      '/payment-methods',
      `/payment-methods?limit=1&buyer_id=${buyer.toUpperCase()}&status=succeeded&status=succeeded`,
    );
    expect(first.status).toBe(200);
    const scope = {
      endpoint: 'payment-methods',
      merchantAccountId: ids.merchant,
      filters: { buyer_id: buyer, status: 'succeeded' },
    };
    expect(() => codec.decode(scope, first.body.next_cursor!)).not.toThrow();
    const cursor = encodeURIComponent(first.body.next_cursor!);
    const same = await get(
      '/payment-methods',
      `/payment-methods?limit=1&cursor=${cursor}&status=succeeded&buyer_id=${buyer}`,
    );
    expect(same.status).toBe(200);
    expect(same.body.items).toHaveLength(1);
    expectProblem(await get('/payment-methods', `/payment-methods?limit=1&cursor=${cursor}`), 400, 'invalid-cursor');
  });

  it('binds authentication-method cursors to their config, as before', async () => {
    const first = (await get('/vault-forward/configs', `/vault-forward/configs/${ids.config}/authentications?limit=1`))
      .body;
    const other = (await get('/vault-forward/configs', '/vault-forward/configs?limit=100')).body.items.find(
      (config) => config.id !== ids.config,
    )!.id;
    const result = await get(
      '/vault-forward/configs',
      `/vault-forward/configs/${other}/authentications?cursor=${encodeURIComponent(first.next_cursor!)}`,
    );
    expectProblem(result, 400, 'invalid-cursor');
  });

  describe.each(Object.keys(LISTS))('%s', (route) => {
    it('answers the envelope with a Link header, and the links walk the pages', async () => {
      const first = await get(route, `${pathOf(route)}?limit=1`);
      expect(first.status).toBe(200);
      expect(Object.keys(first.body).sort()).toEqual(['items', 'limit', 'next_cursor', 'previous_cursor']);
      expect(first.body).toMatchObject({ limit: 1, previous_cursor: null, next_cursor: expect.any(String) });
      expect(first.body.items).toHaveLength(1);
      const next = linkOf(first.headers.get('link'), 'next');
      expect(next).toBe(`${pathOf(route)}?limit=1&cursor=${encodeURIComponent(first.body.next_cursor!)}`);
      expect(linkOf(first.headers.get('link'), 'prev')).toBeUndefined();

      const second = await get(route, next!);
      expect(second.status).toBe(200);
      expect(second.body.items).toHaveLength(1);
      // An item is named by its id, a ledger head by its seq.
      const identity = (item: { id?: string; seq?: number }) => item.id ?? item.seq;
      expect(identity(second.body.items[0])).not.toBe(identity(first.body.items[0]));
      expect(identity(second.body.items[0])).toBeDefined();
      const prev = linkOf(second.headers.get('link'), 'prev');
      expect(prev).toBe(`${pathOf(route)}?limit=1&cursor=${encodeURIComponent(second.body.previous_cursor!)}`);
      const back = await get(route, prev!);
      expect(back.body.items).toEqual(first.body.items);

      const whole = await get(route, `${pathOf(route)}?limit=${limitOf(route).maximum}`);
      expect(whole.body.limit).toBe(limitOf(route).maximum);
      if (whole.body.next_cursor === null) expect(whole.headers.get('link')).toBeNull();
    });

    it('applies the documented default limit and refuses limits outside its range, naming limit', async () => {
      const { minimum, maximum, default: fallback } = limitOf(route);
      expect({ minimum, maximum, default: fallback }).toEqual({ minimum: 1, maximum: 100, default: 20 });
      expect((await get(route, pathOf(route))).body.limit).toBe(fallback);
      for (const bad of ['0', String(maximum! + 1), 'abc', '1.5', '']) {
        const body = expectProblem(await get(route, `${pathOf(route)}?limit=${bad}`), 400, 'validation-failed');
        expect(body.errors).toEqual([
          { location: 'query', name: 'limit', message: `must be a whole number from 1 to ${maximum}` },
        ]);
      }
    });

    it('refuses a cursor of another list, naming cursor', async () => {
      const other = route === '/buyers' ? '/vault-forward/configs' : '/buyers';
      const foreign = (await get(other, `${pathOf(other)}?limit=1`)).body.next_cursor!;
      const body = expectProblem(
        await get(route, `${pathOf(route)}?cursor=${encodeURIComponent(foreign)}`),
        400,
        'invalid-cursor',
      );
      expect(body.errors).toEqual([expect.objectContaining({ location: 'query', name: 'cursor' })]);
    });

    it('issues the cursors it issued before the interceptor, and accepts those', async () => {
      const scope = LISTS[route].binding(ids);
      const first = (await get(route, `${pathOf(route)}?limit=1`)).body;
      // The codec is unchanged: a cursor is the same text iff it is bound to the same scope.
      const position = codec.decode(scope, first.next_cursor!).position;
      const before = codec.encode(scope, 'next', position);
      expect(before).toBe(first.next_cursor);
      const second = await get(route, `${pathOf(route)}?limit=1&cursor=${encodeURIComponent(before)}`);
      expect(second.status).toBe(200);
      expect(second.body.items).toHaveLength(1);
    });
  });
});
