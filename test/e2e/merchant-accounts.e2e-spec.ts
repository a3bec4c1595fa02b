import { randomBytes } from 'node:crypto';
import { createApiKey, TestKey } from '../factories/api-keys';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

const MICROS_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

describe('Merchant accounts (instance keys)', () => {
  let t: TestApp;
  let instanceKey: TestKey;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp();
    instanceKey = await createApiKey(t, null);
    token = await instanceKey.token(['merchant-accounts.read', 'merchant-accounts.write']);
  });
  afterAll(() => t.close());

  const slug = () => `acme-${randomBytes(4).toString('hex')}`;

  /** What every merchant account here says of the Gr4vy features this service does not have. */
  const FEATURES_OFF = {
    account_updater_enabled: false,
    async_network_tokens_enabled: false,
    account_updater_request_encryption_key: null,
    account_updater_request_encryption_key_id: null,
    account_updater_response_decryption_key: null,
    account_updater_response_decryption_key_id: null,
    over_capture_amount: null,
    over_capture_percentage: null,
    loon_client_key: null,
    loon_secret_key: null,
    loon_accepted_schemes: null,
    visa_network_tokens_requestor_id: null,
    visa_network_tokens_app_id: null,
    amex_network_tokens_requestor_id: null,
    amex_network_tokens_app_id: null,
    mastercard_network_tokens_requestor_id: null,
    mastercard_network_tokens_app_id: null,
  };

  describe('Gr4vy feature fields (issue 12, item 6)', () => {
    it('accepts every feature field sent as off (false) or none (null), on create and update, and answers the same', async () => {
      const id = slug();
      const created = await http(t.url, '/merchant-accounts', {
        method: 'POST',
        token,
        body: { id, display_name: 'Off', ...FEATURES_OFF },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ id, display_name: 'Off', ...FEATURES_OFF });
      const updated = await http(t.url, `/merchant-accounts/${id}`, {
        method: 'PUT',
        token,
        body: { display_name: 'Still off', ...FEATURES_OFF },
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ id, display_name: 'Still off', ...FEATURES_OFF });
    });

    it.each([
      ['account_updater_enabled', true],
      ['async_network_tokens_enabled', true],
      ['over_capture_amount', 100],
      ['loon_secret_key', 'secret'],
      ['loon_accepted_schemes', []],
      ['visa_network_tokens_requestor_id', 'req-1'],
    ])(
      'refuses %s: %p (it would turn on a feature we do not have) with 422 naming the field; nothing is created',
      async (field, value) => {
        const id = slug();
        const result = await http(t.url, '/merchant-accounts', {
          method: 'POST',
          token,
          body: { id, display_name: 'On', [field]: value },
        });
        const problem = expectProblem(result, 422, 'merchant-account-feature-unavailable');
        expect(problem.errors).toEqual([
          { location: 'body', name: field, message: expect.stringMatching(/no such feature/) },
        ]);
        expect(problem.detail).toContain(field);
        expectProblem(await http(t.url, `/merchant-accounts/${id}`, { token }), 404, 'merchant-account-not-found');
      },
    );

    it('refuses a feature turned on by an update, listing every such field, and changes nothing', async () => {
      const id = slug();
      await http(t.url, '/merchant-accounts', { method: 'POST', token, body: { id, display_name: 'Before' } });
      const result = await http(t.url, `/merchant-accounts/${id}`, {
        method: 'PUT',
        token,
        body: { display_name: 'After', account_updater_enabled: true, over_capture_percentage: 10 },
      });
      const problem = expectProblem(result, 422, 'merchant-account-feature-unavailable');
      expect(problem.errors.map((e: { name: string }) => e.name)).toEqual([
        'account_updater_enabled',
        'over_capture_percentage',
      ]);
      expect((await http(t.url, `/merchant-accounts/${id}`, { token })).body.display_name).toBe('Before');
    });

    it('refuses a feature switch that is not a boolean (400), and fields Gr4vy does not define at all (400)', async () => {
      const notBoolean = await http(t.url, '/merchant-accounts', {
        method: 'POST',
        token,
        body: { id: slug(), display_name: 'X', account_updater_enabled: 'no' },
      });
      expect(expectProblem(notBoolean, 400, 'validation-failed').errors).toEqual([
        { location: 'body', name: 'account_updater_enabled', message: expect.stringContaining('boolean') },
      ]);
      const unknown = await http(t.url, '/merchant-accounts', {
        method: 'POST',
        token,
        body: { id: slug(), display_name: 'X', payouts_enabled: false },
      });
      expect(expectProblem(unknown, 400, 'validation-failed').errors).toEqual([
        { location: 'body', name: 'payouts_enabled', message: expect.stringContaining('should not exist') },
      ]);
    });
  });

  it('creates, gets, lists and updates a merchant account', async () => {
    const id = slug();
    const created = await http(t.url, '/merchant-accounts', {
      method: 'POST',
      token,
      body: { id, display_name: 'ACME' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      type: 'merchant-account',
      id,
      display_name: 'ACME',
      ...FEATURES_OFF,
      secure_fields_origins: [],
      created_at: expect.stringMatching(MICROS_ISO),
      updated_at: expect.stringMatching(MICROS_ISO),
    });

    expect((await http(t.url, `/merchant-accounts/${id}`, { token })).body).toEqual(created.body);
    const list = await http(t.url, '/merchant-accounts', { token });
    expect(list.body.items.map((m: { id: string }) => m.id)).toContain(id);

    const updated = await http(t.url, `/merchant-accounts/${id}`, {
      method: 'PUT',
      token,
      body: { display_name: 'ACME Europe' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.display_name).toBe('ACME Europe');
    expect(updated.body.created_at).toBe(created.body.created_at);
    expect(updated.body.updated_at > created.body.updated_at).toBe(true);
    // A display name alone leaves the Secure Fields origins as they were; a list replaces them (decision 0140).
    const withOrigins = await http(t.url, `/merchant-accounts/${id}`, {
      method: 'PUT',
      token,
      body: { secure_fields_origins: ['https://shop.example', 'https://shop.example/'] },
    });
    expect(withOrigins.body.secure_fields_origins).toEqual(['https://shop.example']);
    const renamed = await http(t.url, `/merchant-accounts/${id}`, {
      method: 'PUT',
      token,
      body: { display_name: 'ACME EU' },
    });
    expect(renamed.body).toMatchObject({ display_name: 'ACME EU', secure_fields_origins: ['https://shop.example'] });
  });

  it('returns timestamps equal to the database value to the microsecond', async () => {
    const id = slug();
    const created = await http(t.url, '/merchant-accounts', {
      method: 'POST',
      token,
      body: { id, display_name: 'Micro' },
    });
    const [row] = await t.db.query(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"') AS created_at,
              extract(microseconds FROM created_at)::int % 1000 AS sub_millis
         FROM merchant_accounts WHERE id = $1`,
      [id],
    );
    expect(created.body.created_at).toBe(row.created_at);
    // Many rows later: at least one must carry non-zero sub-millisecond digits, or the test proves nothing.
    const samples: string[] = [];
    for (let i = 0; i < 5; i++) {
      samples.push(
        (await http(t.url, '/merchant-accounts', { method: 'POST', token, body: { id: slug(), display_name: 'M' } }))
          .body.created_at,
      );
    }
    expect(samples.concat(created.body.created_at).some((s) => !s.endsWith('000+00:00'))).toBe(true);
  });

  it('refuses a duplicate id with 409 naming the field', async () => {
    const id = slug();
    await http(t.url, '/merchant-accounts', { method: 'POST', token, body: { id, display_name: 'One' } });
    const again = await http(t.url, '/merchant-accounts', { method: 'POST', token, body: { id, display_name: 'Two' } });
    const problem = expectProblem(again, 409, 'merchant-account-exists');
    expect(problem.errors).toEqual([expect.objectContaining({ location: 'body', name: 'id' })]);
  });

  it('404 for an unknown merchant account, on get and update', async () => {
    expectProblem(await http(t.url, '/merchant-accounts/nobody-here', { token }), 404, 'merchant-account-not-found');
    expectProblem(
      await http(t.url, '/merchant-accounts/nobody-here', { method: 'PUT', token, body: { display_name: 'X' } }),
      404,
      'merchant-account-not-found',
    );
  });

  it('needs merchant-accounts.write to create', async () => {
    const readOnly = await instanceKey.token(['merchant-accounts.read']);
    const result = await http(t.url, '/merchant-accounts', {
      method: 'POST',
      token: readOnly,
      body: { id: slug(), display_name: 'X' },
    });
    expectProblem(result, 403, 'forbidden');
  });
});
