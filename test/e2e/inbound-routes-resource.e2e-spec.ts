import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { TestCa } from '../support/test-pki';

/**
 * /vault-forward/inbound-routes (issue 50): create, read, list by cursor, update, delete; the scopes
 * vault-forward-inbound-routes.read|write; secrets write-only and sealed; a route of another merchant is not
 * found; what is refused names its field.
 */
describe('Inbound routes: the resource', () => {
  let t: TestApp;
  let merchant: string;
  let token: string;
  const SECRET = 'resource-test-secret-0123456789';

  const create = (body: Record<string, unknown>, tok = token) =>
    http(t.url, '/vault-forward/inbound-routes', {
      method: 'POST',
      token: tok,
      body: {
        display_name: 'Partner',
        upstream_url: 'https://merchant.example/inbound',
        caller_authentication: { kind: 'shared-secret', header: 'X-Partner-Key', secret: SECRET },
        ...body,
      },
    });

  beforeAll(async () => {
    t = await startTestApp();
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
  });
  afterAll(() => t.close());

  it('creates with defaults, reads, updates only what is sent and deletes; the secret is never answered', async () => {
    const created = await create({ field_mappings: { json: { security_code: '/card/cvv' } } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toEqual({
      type: 'inbound-route',
      id,
      merchant_account_id: merchant,
      display_name: 'Partner',
      entry_path: `/vault-inbound/${id}`,
      upstream_url: 'https://merchant.example/inbound',
      methods: ['POST'],
      path_prefixes: ['/'],
      caller_authentication: { kind: 'shared-secret', header: 'x-partner-key' },
      max_body_bytes: 65536,
      timeout_seconds: 30,
      field_mappings: { json: { security_code: '/card/cvv' } },
      upstream_headers: [],
      record_bodies: false,
      record_bodies_retention_days: 7,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await http(t.url, `/vault-forward/inbound-routes/${id}`, { token })).body).toEqual(created.body);
    const [row] = await t.db.query(
      `SELECT row_to_json(r)::text AS text, ciphertext FROM inbound_routes r WHERE id = $1`,
      [id],
    );
    expect(row.text).not.toContain(SECRET);
    expect((row.ciphertext as Buffer).includes(Buffer.from(SECRET))).toBe(false);

    const updated = await http(t.url, `/vault-forward/inbound-routes/${id}`, {
      method: 'PUT',
      token,
      body: {
        methods: ['POST', 'PUT'],
        caller_authentication: {
          kind: 'hmac',
          scheme: 'standard-webhooks',
          secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
        },
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      display_name: 'Partner',
      methods: ['POST', 'PUT'],
      caller_authentication: { kind: 'hmac', scheme: 'standard-webhooks', tolerance_seconds: 300 },
      field_mappings: { json: { security_code: '/card/cvv' } },
    });
    expect(updated.text).not.toContain('whsec_');
    expect((await http(t.url, `/vault-forward/inbound-routes/${id}`, { method: 'DELETE', token })).status).toBe(204);
    expectProblem(await http(t.url, `/vault-forward/inbound-routes/${id}`, { token }), 404, 'inbound-route-not-found');
  });

  it('upstream header values are write-only and sealed: names answered, PUT replaces the list, a new secret keeps it', async () => {
    const VALUE = 'Bearer upstream-token-resource-0123456789';
    const created = await create({
      upstream_headers: [
        { name: 'Authorization', value: VALUE },
        { name: 'x-merchant-route', value: 'bookings' },
      ],
      record_bodies: true,
      record_bodies_retention_days: 3,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({
      upstream_headers: [{ name: 'authorization' }, { name: 'x-merchant-route' }],
      record_bodies: true,
      record_bodies_retention_days: 3,
    });
    const sealedRow = async () =>
      (
        await t.db.query(
          `SELECT row_to_json(r)::text AS text, upstream_headers, wrapped_key FROM inbound_routes r WHERE id = $1`,
          [id],
        )
      )[0] as { text: string; upstream_headers: Buffer | null; wrapped_key: Buffer | null };
    const first = await sealedRow();
    for (const text of [created.text, first.text]) expect(text).not.toContain('upstream-token-resource');
    expect(first.upstream_headers!.includes(Buffer.from('upstream-token-resource'))).toBe(false);

    // A new caller secret alone: the headers are sealed again with it, under a new data key.
    const rekeyed = await http(t.url, `/vault-forward/inbound-routes/${id}`, {
      method: 'PUT',
      token,
      body: { caller_authentication: { kind: 'shared-secret', header: 'x-partner-key', secret: `${SECRET}-2` } },
    });
    expect(rekeyed.body.upstream_headers).toEqual([{ name: 'authorization' }, { name: 'x-merchant-route' }]);
    const second = await sealedRow();
    expect(second.wrapped_key!.equals(first.wrapped_key!)).toBe(false);
    expect(second.upstream_headers).not.toBeNull();

    const cleared = await http(t.url, `/vault-forward/inbound-routes/${id}`, {
      method: 'PUT',
      token,
      body: { upstream_headers: [], record_bodies: false },
    });
    expect(cleared.body).toMatchObject({ upstream_headers: [], record_bodies: false, record_bodies_retention_days: 3 });
    expect((await sealedRow()).upstream_headers).toBeNull();
    // Nor a route of kind none with headers only: they are sealed under a data key of their own.
    const keyless = await create({
      caller_authentication: { kind: 'none', rate_limit: { requests: 1, per_seconds: 1 } },
      upstream_headers: [{ name: 'x-api-key', value: VALUE }],
    });
    const [row] = await t.db.query(
      `SELECT ciphertext, upstream_headers, wrapped_key FROM inbound_routes WHERE id = $1`,
      [keyless.body.id],
    );
    expect([row.ciphertext, row.upstream_headers === null, row.wrapped_key === null]).toEqual([null, false, false]);
    expect(keyless.text).not.toContain(VALUE);
  });

  it('lists newest first by cursor, only the merchant’s own', async () => {
    const other = (await createMerchantAccount(t)).id;
    const otherToken = await (await createApiKey(t, other)).token();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ display_name: `Listed ${i}` }, otherToken)).body.id as string);
    const first = await http(t.url, '/vault-forward/inbound-routes?limit=2', { token: otherToken });
    expect(first.body.items.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await http(
      t.url,
      `/vault-forward/inbound-routes?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      {
        token: otherToken,
      },
    );
    expect(second.body.items.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
    expect(second.body.next_cursor).toBeNull();
    const mine = await http(t.url, '/vault-forward/inbound-routes?limit=100', { token });
    expect(mine.body.items.some((r: { id: string }) => ids.includes(r.id))).toBe(false);
    for (const method of ['GET', 'PUT', 'DELETE'])
      expectProblem(
        await http(t.url, `/vault-forward/inbound-routes/${ids[0]}`, {
          method,
          token,
          ...(method === 'PUT' ? { body: { display_name: 'x' } } : {}),
        }),
        404,
        'inbound-route-not-found',
      );
    const records = await http(t.url, '/vault-forward/inbound-requests', { token: otherToken });
    expect(records.body.items).toEqual([]);
  });

  it('needs vault-forward-inbound-routes.read to read and .write to change', async () => {
    const key = await createApiKey(t, merchant);
    const readOnly = await key.token(['vault-forward-inbound-routes.read']);
    const writeOnly = await key.token(['vault-forward-inbound-routes.write']);
    const unrelated = await key.token(['vault-forward-configs.read', 'vault-forward-configs.write']);
    expect((await http(t.url, '/vault-forward/inbound-routes', { token: readOnly })).status).toBe(200);
    expect((await http(t.url, '/vault-forward/inbound-requests', { token: readOnly })).status).toBe(200);
    expectProblem(await create({}, readOnly), 403, 'forbidden');
    const created = await create({}, writeOnly);
    expect(created.status).toBe(201);
    expectProblem(await http(t.url, '/vault-forward/inbound-routes', { token: writeOnly }), 403, 'forbidden');
    expectProblem(await http(t.url, '/vault-forward/inbound-routes', { token: unrelated }), 403, 'forbidden');
    expectProblem(
      await http(t.url, `/vault-forward/inbound-routes/${created.body.id}`, { method: 'DELETE', token: readOnly }),
      403,
      'forbidden',
    );
  });

  it('refuses what cannot work, naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ upstream_url: 'http://merchant.example/in' }, 'upstream_url', 'not https'],
      [{ upstream_url: 'https://192.168.1.4/in' }, 'upstream_url', 'private'],
      [{ upstream_url: 'https://merchant.example/in?x=1' }, 'upstream_url', 'query'],
      [
        { caller_authentication: { kind: 'shared-secret', header: 'x-key', secret: 'short' } },
        'caller_authentication',
        '16 bytes',
      ],
      [
        { caller_authentication: { kind: 'shared-secret', header: 'content-type', secret: SECRET } },
        'caller_authentication',
        'header',
      ],
      [{ caller_authentication: { kind: 'none' } }, 'caller_authentication', 'rate_limit'],
      [{ caller_authentication: { kind: 'hmac', scheme: 'md5', secret: SECRET } }, 'caller_authentication', 'scheme'],
      [
        { caller_authentication: { kind: 'mutual-tls', ca_certificates: 'not a certificate' } },
        'caller_authentication',
        'PEM',
      ],
      [{ caller_authentication: { kind: 'basic' } }, 'caller_authentication', 'kind'],
      [{ field_mappings: { yaml: {} } }, 'field_mappings', 'format'],
      [{ field_mappings: { json: { card_number: 'cards/0' } } }, 'field_mappings', 'start with /'],
      [{ field_mappings: { json: { pan: '/pan' } } }, 'field_mappings', 'mapped field'],
      [{ path_prefixes: ['bookings'] }, 'path_prefixes', 'starting with /'],
      [{ max_body_bytes: 2 * 1024 * 1024 }, 'max_body_bytes', ''],
      [{ methods: ['TRACE'] }, 'methods', 'one of'],
      [{ upstream_headers: [{ name: 'Host', value: 'x' }] }, 'upstream_headers', 'host'],
      [
        { upstream_headers: [{ name: 'Transfer-Encoding', value: 'chunked' }] },
        'upstream_headers',
        'transfer-encoding',
      ],
      [{ upstream_headers: [{ name: 'Webhook-Signature', value: 'v1,x' }] }, 'upstream_headers', 'webhook-signature'],
      [{ upstream_headers: [{ name: 'content-length', value: '1' }] }, 'upstream_headers', 'content-length'],
      [
        {
          upstream_headers: [
            { name: 'x-api-key', value: SECRET },
            { name: 'X-API-Key', value: SECRET },
          ],
        },
        'upstream_headers',
        'named twice',
      ],
      [{ upstream_headers: [{ name: 'bad name', value: 'x' }] }, 'upstream_headers', 'header name'],
      [{ upstream_headers: [{ name: 'x-api-key', value: `${SECRET}\r\nx: y` }] }, 'upstream_headers', 'visible'],
      [{ upstream_headers: [{ name: 'x-api-key', value: '' }] }, 'upstream_headers', 'visible'],
      [{ upstream_headers: [{ name: 'x-api-key' }] }, 'upstream_headers', 'visible'],
      [{ upstream_headers: [{ name: 'x-card', value: '4111111111111111' }] }, 'upstream_headers', 'card number'],
      [
        { upstream_headers: Array.from({ length: 21 }, (_, i) => ({ name: `x-h${i}`, value: 'v' })) },
        'upstream_headers',
        'at most 20',
      ],
      [{ upstream_headers: { 'x-api-key': SECRET } }, 'upstream_headers', 'list'],
      [{ record_bodies: 'yes' }, 'record_bodies', 'boolean'],
      [{ record_bodies_retention_days: 31 }, 'record_bodies_retention_days', ''],
    ];
    for (const [body, field, message] of cases) {
      const problem = expectProblem(await create(body), 400, 'validation-failed');
      expect(problem.errors).toEqual([
        expect.objectContaining({ name: field, message: expect.stringContaining(message) }),
      ]);
      expect(JSON.stringify(problem)).not.toContain(SECRET);
    }
    // No TLS terminator passes on client certificates here (INBOUND_CLIENT_CERT_HEADER unset).
    const ca = TestCa.create('resource-ca');
    expectProblem(
      await create({ caller_authentication: { kind: 'mutual-tls', ca_certificates: ca.cert } }),
      422,
      'inbound-mutual-tls-unavailable',
    );
  });
});
