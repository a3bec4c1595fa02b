import { randomUUID } from 'node:crypto';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

const MICROS_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

describe('Buyers', () => {
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

  const create = (token: string, body: unknown) => http(t.url, '/buyers', { method: 'POST', token, body });

  it('creates, gets, updates (partially, null clears) and deletes a buyer', async () => {
    const created = await create(tokenA, { display_name: 'John Doe', external_identifier: `ext-${randomUUID()}` });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      type: 'buyer',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      merchant_account_id: merchantA,
      display_name: 'John Doe',
      external_identifier: expect.stringMatching(/^ext-/),
      created_at: expect.stringMatching(MICROS_ISO),
      updated_at: expect.stringMatching(MICROS_ISO),
    });
    const id = created.body.id;
    expect((await http(t.url, `/buyers/${id}`, { token: tokenA })).body).toEqual(created.body);

    const renamed = await http(t.url, `/buyers/${id}`, {
      method: 'PUT',
      token: tokenA,
      body: { display_name: 'Jane Doe' },
    });
    expect(renamed.body).toMatchObject({
      display_name: 'Jane Doe',
      external_identifier: created.body.external_identifier,
    });
    expect(renamed.body.updated_at > created.body.updated_at).toBe(true);
    expect(renamed.body.created_at).toBe(created.body.created_at);

    const cleared = await http(t.url, `/buyers/${id}`, {
      method: 'PUT',
      token: tokenA,
      body: { external_identifier: null },
    });
    expect(cleared.body).toMatchObject({ display_name: 'Jane Doe', external_identifier: null });

    const deleted = await http(t.url, `/buyers/${id}`, { method: 'DELETE', token: tokenA });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await http(t.url, `/buyers/${id}`, { token: tokenA }), 404, 'buyer-not-found');
  });

  it('returns created_at equal to the database value to the microsecond', async () => {
    const created = await create(tokenA, { display_name: 'Micro' });
    const [row] = await t.db.query(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"') AS created_at FROM buyers WHERE id = $1`,
      [created.body.id],
    );
    expect(created.body.created_at).toBe(row.created_at);
    // And a row whose microseconds are not zero comes back with them, not rounded to milliseconds.
    await t.db.query(`UPDATE buyers SET created_at = '2026-11-20T09:14:03.123457+00:00' WHERE id = $1`, [
      created.body.id,
    ]);
    expect((await http(t.url, `/buyers/${created.body.id}`, { token: tokenA })).body.created_at).toBe(
      '2026-11-20T09:14:03.123457+00:00',
    );
  });

  it.each([
    [{}, 'display_name'],
    [{ display_name: '' }, 'display_name'],
    [{ display_name: 'x'.repeat(201) }, 'display_name'],
    [{ display_name: 42 }, 'display_name'],
    [{ display_name: 'ok', external_identifier: 'x'.repeat(201) }, 'external_identifier'],
    [{ display_name: 'ok', unknown_field: 1 }, 'unknown_field'],
  ])('refuses %p with 400 naming %s', async (body, field) => {
    const problem = expectProblem(await create(tokenA, body), 400, 'validation-failed');
    expect(problem.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ location: 'body', name: field })]),
    );
  });

  it('refuses display_name: null on update (400), leaving the buyer unchanged', async () => {
    const buyer = await create(tokenA, { display_name: 'Keeps name' });
    const problem = expectProblem(
      await http(t.url, `/buyers/${buyer.body.id}`, { method: 'PUT', token: tokenA, body: { display_name: null } }),
      400,
      'validation-failed',
    );
    expect(problem.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ location: 'body', name: 'display_name' })]),
    );
    expect(problem.errors.every((e: { name: string }) => e.name === 'display_name')).toBe(true);
    expect((await http(t.url, `/buyers/${buyer.body.id}`, { token: tokenA })).body.display_name).toBe('Keeps name');
  });

  it('keeps external_identifier unique per merchant account (409), but not across merchants', async () => {
    const ext = `dup-${randomUUID()}`;
    expect((await create(tokenA, { display_name: 'One', external_identifier: ext })).status).toBe(201);
    const problem = expectProblem(
      await create(tokenA, { display_name: 'Two', external_identifier: ext }),
      409,
      'buyer-external-identifier-exists',
    );
    expect(problem.errors[0]).toMatchObject({ location: 'body', name: 'external_identifier' });
    expect((await create(tokenB, { display_name: 'Other merchant', external_identifier: ext })).status).toBe(201);
    // Updating onto a taken identifier is the same conflict.
    const other = await create(tokenA, { display_name: 'Three' });
    expectProblem(
      await http(t.url, `/buyers/${other.body.id}`, {
        method: 'PUT',
        token: tokenA,
        body: { external_identifier: ext },
      }),
      409,
      'buyer-external-identifier-exists',
    );
  });

  it('isolates merchants: B cannot see, update or delete A’s buyer (404) and never lists it', async () => {
    const ext = `iso-${randomUUID()}`;
    const mine = await create(tokenA, { display_name: 'Private', external_identifier: ext });
    const path = `/buyers/${mine.body.id}`;
    expectProblem(await http(t.url, path, { token: tokenB }), 404, 'buyer-not-found');
    expectProblem(
      await http(t.url, path, { method: 'PUT', token: tokenB, body: { display_name: 'Hacked' } }),
      404,
      'buyer-not-found',
    );
    expectProblem(await http(t.url, path, { method: 'DELETE', token: tokenB }), 404, 'buyer-not-found');
    expect((await http(t.url, path, { token: tokenA })).body.display_name).toBe('Private');
    for (const query of ['', `?external_identifier=${ext}`, `?search=${ext}`, '?limit=100']) {
      const list = await http(t.url, `/buyers${query}`, { token: tokenB });
      expect(list.status).toBe(200);
      expect(list.body.items.map((b: { id: string }) => b.id)).not.toContain(mine.body.id);
    }
  });

  it('answers 404 for ids that are not UUIDs, without a database error', async () => {
    expectProblem(await http(t.url, '/buyers/not-a-uuid', { token: tokenA }), 404, 'buyer-not-found');
  });

  it('requires buyers.read / buyers.write', async () => {
    const key = await createApiKey(t, merchantA);
    expectProblem(await http(t.url, '/buyers', { token: await key.token(['buyers.write']) }), 403, 'forbidden');
    expectProblem(await create(await key.token(['buyers.read']), { display_name: 'X' }), 403, 'forbidden');
  });

  describe('list filters', () => {
    let merchant: string;
    let token: string;
    beforeAll(async () => {
      merchant = (await createMerchantAccount(t)).id;
      token = await (await createApiKey(t, merchant)).token();
      for (const [name, ext] of [
        ['Alice Martin', 'crm-001'],
        ['alice cooper', 'crm-002'],
        ['Bob 100%_sure', 'ALICE-ref'],
        ['Carol', null],
      ]) {
        await create(token, { display_name: name, ...(ext ? { external_identifier: ext } : {}) });
      }
    });
    const names = async (query: string) =>
      (await http(t.url, `/buyers${query}`, { token })).body.items.map((b: { display_name: string }) => b.display_name);

    it('search matches display_name or external_identifier, case-insensitively, newest first', async () => {
      expect(await names('?search=ALICE')).toEqual(['Bob 100%_sure', 'alice cooper', 'Alice Martin']);
    });
    it('search treats % and _ literally', async () => {
      expect(await names('?search=%25_')).toEqual(['Bob 100%_sure']);
      expect(await names('?search=_')).toEqual(['Bob 100%_sure']);
    });
    it('external_identifier matches exactly', async () => {
      expect(await names('?external_identifier=crm-002')).toEqual(['alice cooper']);
      expect(await names('?external_identifier=CRM-002')).toEqual([]);
    });
    it('refuses unknown query parameters', async () => {
      const problem = expectProblem(await http(t.url, '/buyers?colour=blue', { token }), 400, 'validation-failed');
      expect(problem.errors[0]).toMatchObject({ location: 'query', name: 'colour' });
    });
  });
});
