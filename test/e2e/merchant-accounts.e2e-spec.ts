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

  it('creates, gets, lists and updates a merchant account', async () => {
    const id = slug();
    const created = await http(t.url, '/merchant-accounts', { method: 'POST', token, body: { id, display_name: 'ACME' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      type: 'merchant-account',
      id,
      display_name: 'ACME',
      created_at: expect.stringMatching(MICROS_ISO),
      updated_at: expect.stringMatching(MICROS_ISO),
    });

    expect((await http(t.url, `/merchant-accounts/${id}`, { token })).body).toEqual(created.body);
    const list = await http(t.url, '/merchant-accounts', { token });
    expect(list.body.items.map((m: { id: string }) => m.id)).toContain(id);

    const updated = await http(t.url, `/merchant-accounts/${id}`, { method: 'PUT', token, body: { display_name: 'ACME Europe' } });
    expect(updated.status).toBe(200);
    expect(updated.body.display_name).toBe('ACME Europe');
    expect(updated.body.created_at).toBe(created.body.created_at);
    expect(updated.body.updated_at > created.body.updated_at).toBe(true);
  });

  it('returns timestamps equal to the database value to the microsecond', async () => {
    const id = slug();
    const created = await http(t.url, '/merchant-accounts', { method: 'POST', token, body: { id, display_name: 'Micro' } });
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
      samples.push((await http(t.url, '/merchant-accounts', { method: 'POST', token, body: { id: slug(), display_name: 'M' } })).body.created_at);
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
    const result = await http(t.url, '/merchant-accounts', { method: 'POST', token: readOnly, body: { id: slug(), display_name: 'X' } });
    expectProblem(result, 403, 'forbidden');
  });
});
