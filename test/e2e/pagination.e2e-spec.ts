import { createApiKey, TestKey } from '../factories/api-keys';
import { insertBuyersWithinOneMillisecond } from '../factories/buyers';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

interface Envelope {
  items: Array<{ id: string; created_at: string }>;
  limit: number;
  next_cursor: string | null;
  previous_cursor: string | null;
}

describe('Shared cursor pagination (on /buyers and /merchant-accounts)', () => {
  let t: TestApp;
  let merchant: string;
  let key: TestKey;
  let token: string;
  let expected: string[];

  beforeAll(async () => {
    t = await startTestApp();
    merchant = (await createMerchantAccount(t)).id;
    key = await createApiKey(t, merchant);
    token = await key.token();
    // 250 buyers inside one millisecond: exact ties broken by id only, the rest differing only in microseconds.
    expected = await insertBuyersWithinOneMillisecond(t, merchant, 250);
  });
  afterAll(() => t.close());

  const page = async (query: string, tok = token) => {
    const result = await http<Envelope>(t.url, `/buyers${query}`, { token: tok });
    expect(result.status).toBe(200);
    return result.body;
  };
  const ids = (p: Envelope) => p.items.map((i) => i.id);
  const q = (cursor: string, extra = '') => `?limit=7&cursor=${encodeURIComponent(cursor)}${extra}`;

  it('the fixture really has ties and sub-millisecond differences', async () => {
    const [stats] = await t.db.query(
      `SELECT count(*)::int AS rows, count(DISTINCT created_at)::int AS instants,
              count(DISTINCT date_trunc('milliseconds', created_at))::int AS millis
         FROM buyers WHERE merchant_account_id = $1`,
      [merchant],
    );
    expect(stats).toEqual({ rows: 250, instants: 7, millis: 1 });
  });

  it('walks forward to the end and back to the start with limit=7: nothing lost, nothing repeated', async () => {
    const forward: Envelope[] = [await page('?limit=7')];
    expect(forward[0].previous_cursor).toBeNull();
    while (forward[forward.length - 1].next_cursor) {
      forward.push(await page(q(forward[forward.length - 1].next_cursor!)));
      expect(forward.length).toBeLessThan(100);
    }
    expect(forward).toHaveLength(Math.ceil(250 / 7));
    for (const p of forward) expect(p.limit).toBe(7);
    const walked = forward.flatMap(ids);
    expect(walked).toEqual(expected);
    expect(new Set(walked).size).toBe(250);
    expect(forward[forward.length - 1].items).toHaveLength(250 % 7);

    const backward: Envelope[] = [forward[forward.length - 1]];
    while (backward[backward.length - 1].previous_cursor) {
      backward.push(await page(q(backward[backward.length - 1].previous_cursor!)));
      expect(backward.length).toBeLessThan(100);
    }
    expect(backward.map(ids)).toEqual([...forward].reverse().map(ids));
    expect(backward[backward.length - 1].previous_cursor).toBeNull();
  });

  it('next then previous returns exactly the page you came from, cursors included', async () => {
    const first = await page('?limit=7');
    const second = await page(q(first.next_cursor!));
    const third = await page(q(second.next_cursor!));
    const backToSecond = await page(q(third.previous_cursor!));
    expect(backToSecond).toEqual(second);
    const backToFirst = await page(q(second.previous_cursor!));
    expect(ids(backToFirst)).toEqual(ids(first));
    expect(backToFirst.previous_cursor).toBeNull();
    expect(backToFirst.next_cursor).toBe(first.next_cursor);
  });

  it('a forward walk stays exact while rows are being inserted', async () => {
    const seen: string[] = [];
    let current = await page('?limit=20');
    for (;;) {
      seen.push(...ids(current));
      // New buyers arrive between every page request.
      await http(t.url, '/buyers', { method: 'POST', token, body: { display_name: 'Arrived mid-walk' } });
      if (!current.next_cursor) break;
      current = await page(`?limit=20&cursor=${encodeURIComponent(current.next_cursor)}`);
    }
    expect(seen).toEqual(expected);
  });

  it('defaults to 20 and echoes the applied limit; next_cursor is null on the last page', async () => {
    const p = await page('');
    expect(p.limit).toBe(20);
    expect(p.items.length).toBeLessThanOrEqual(20);
    const all = await page('?limit=100');
    expect(all.limit).toBe(100);
    const small = await createMerchantAccount(t);
    const smallToken = await (await createApiKey(t, small.id)).token();
    await http(t.url, '/buyers', { method: 'POST', token: smallToken, body: { display_name: 'Only one' } });
    const only = await page('?limit=5', smallToken);
    expect(only).toMatchObject({ limit: 5, next_cursor: null, previous_cursor: null });
    expect(only.items).toHaveLength(1);
    const empty = await createMerchantAccount(t);
    expect(await page('', await (await createApiKey(t, empty.id)).token())).toEqual({
      items: [],
      limit: 20,
      next_cursor: null,
      previous_cursor: null,
    });
  });

  it.each(['0', '101', '-1', 'abc', '1.5', '', '1e2', ' 5'])('limit=%p → 400 naming limit', async (limit) => {
    const result = await http(t.url, `/buyers?limit=${encodeURIComponent(limit)}`, { token });
    const problem = expectProblem(result, 400, 'validation-failed');
    expect(problem.errors).toEqual([expect.objectContaining({ location: 'query', name: 'limit' })]);
  });

  describe('cursors are tamper-evident (400 invalid-cursor naming cursor)', () => {
    let cursor: string;
    beforeAll(async () => {
      cursor = (await page('?limit=7')).next_cursor!;
    });
    const refused = async (query: string, tok = token) => {
      const problem = expectProblem(await http(t.url, `/buyers${query}`, { token: tok }), 400, 'invalid-cursor');
      expect(problem.errors).toEqual([expect.objectContaining({ location: 'query', name: 'cursor' })]);
    };

    it('any one character changed, anywhere in the cursor', async () => {
      const positions = [
        0,
        5,
        Math.floor(cursor.length / 2),
        cursor.indexOf('.') - 1,
        cursor.indexOf('.') + 1,
        cursor.length - 1,
      ];
      for (const i of positions) {
        const replacement = cursor[i] === 'A' ? 'B' : 'A';
        const altered = cursor.slice(0, i) + replacement + cursor.slice(i + 1);
        await refused(q(altered));
      }
    });
    it('truncated', () => refused(q(cursor.slice(0, -3))));
    it('not base64url', () => refused(q('%%%not*base64%%%')));
    it('empty', () => refused('?cursor='));
    it('absurdly long', () => refused(q(`${cursor}${'A'.repeat(2000)}`)));
    it('made for another filter set', () => refused(q(cursor, '&search=Bulk')));
    it('made for another merchant account', async () => {
      const other = await createMerchantAccount(t);
      await refused(q(cursor), await (await createApiKey(t, other.id)).token());
    });
    it('made for another endpoint', async () => {
      const instance = await createApiKey(t, null);
      const instanceToken = await instance.token();
      const accounts = await http<Envelope>(t.url, '/merchant-accounts?limit=1', { token: instanceToken });
      expect(accounts.body.next_cursor).toEqual(expect.any(String));
      await refused(q(accounts.body.next_cursor!));
      // …and the reverse.
      const problem = expectProblem(
        await http(t.url, `/merchant-accounts?cursor=${encodeURIComponent(cursor)}`, { token: instanceToken }),
        400,
        'invalid-cursor',
      );
      expect(problem.errors[0].name).toBe('cursor');
    });
    it('a cursor is accepted with the same filters it was made with', async () => {
      const filtered = await page('?limit=3&search=bulk');
      const next = await page(`?limit=3&search=bulk&cursor=${encodeURIComponent(filtered.next_cursor!)}`);
      expect(next.items).toHaveLength(3);
    });
  });

  it('merchant accounts page with the same mechanism', async () => {
    const instanceToken = await (await createApiKey(t, null)).token(['merchant-accounts.read']);
    const seen: string[] = [];
    let current = await http<Envelope>(t.url, '/merchant-accounts?limit=2', { token: instanceToken });
    expect(current.body.previous_cursor).toBeNull();
    for (;;) {
      seen.push(...ids(current.body));
      if (!current.body.next_cursor) break;
      current = await http<Envelope>(
        t.url,
        `/merchant-accounts?limit=2&cursor=${encodeURIComponent(current.body.next_cursor)}`,
        {
          token: instanceToken,
        },
      );
    }
    const rows: Array<{ id: string }> = await t.db.query(
      'SELECT id FROM merchant_accounts ORDER BY created_at DESC, id DESC',
    );
    expect(seen).toEqual(rows.map((r) => r.id));
  });

  it('the keyset query uses the composite index, not a sort of the whole table', async () => {
    const plan: Array<{ 'QUERY PLAN': string }> = await t.db.query(
      `EXPLAIN SELECT * FROM buyers WHERE merchant_account_id = $1
          AND (created_at, id) < ('2026-11-20T09:14:03.123003+00:00'::timestamptz, '00000000-0000-0000-0000-000000000000'::uuid)
        ORDER BY created_at DESC, id DESC LIMIT 8`,
      [merchant],
    );
    const text = plan.map((r) => r['QUERY PLAN']).join('\n');
    // With few rows the planner may pick a sequential scan; force the question.
    if (!/buyers_keyset_idx/.test(text)) {
      await t.db.query('BEGIN');
      try {
        await t.db.query('SET LOCAL enable_seqscan = off');
        const forced: Array<{ 'QUERY PLAN': string }> = await t.db.query(
          `EXPLAIN SELECT * FROM buyers WHERE merchant_account_id = $1
              AND (created_at, id) < ('2026-11-20T09:14:03.123003+00:00'::timestamptz, '00000000-0000-0000-0000-000000000000'::uuid)
            ORDER BY created_at DESC, id DESC LIMIT 8`,
          [merchant],
        );
        expect(forced.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index (Only )?Scan using buyers_keyset_idx/);
      } finally {
        await t.db.query('ROLLBACK');
      }
    }
  });
});
