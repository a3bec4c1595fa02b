import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { SYSTEM_CLOCK } from '../../src/platform/time/clock';

/** GET /vault-forward/activity: forwards per minute by outcome, from the records table. */
describe('forward activity per minute', () => {
  let t: TestApp;
  let merchant: string;
  let other: string;
  let token: string;

  /**
   * The app's clock is pinned in statements (Clock.now, src/platform/time/clock.ts): records written relative to it stay in their
   * minute however long the test takes, with no wait for a minute boundary to pass.
   */
  const NOW = new Date('2026-03-01T12:34:56.789Z');

  /** One record `minutesAgo` minutes before the current minute started (+ 10 s into it). */
  async function record(
    merchantAccountId: string,
    minutesAgo: number,
    status: number | null,
    errorType: string | null = null,
  ) {
    await t.db.query(
      `INSERT INTO vault_forward_requests (id, merchant_account_id, method, target_url, status, duration_ms, error_type, created_at)
       VALUES (gen_random_uuid()::text, $1, 'POST', 'https://psp.example/x', $2, 12, $3,
               date_trunc('minute', $5::timestamptz) - $4::int * interval '1 minute' + interval '10 seconds')`,
      [merchantAccountId, status, errorType, minutesAgo, NOW],
    );
  }

  beforeAll(async () => {
    t = await startTestApp({ clock: { ...SYSTEM_CLOCK, now: () => NOW } });
    merchant = (await createMerchantAccount(t)).id;
    other = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token(['vault-forwards.read']);
    await record(merchant, 0, 200);
    await record(merchant, 0, 201);
    await record(merchant, 0, 302);
    await record(merchant, 0, 500);
    await record(merchant, 0, 502, 'downstream-unreachable');
    await record(merchant, 0, null);
    await record(merchant, 5, 404);
    await record(merchant, 59, 200);
    await record(merchant, 60, 200); // one minute before the window
    await record(other, 0, 200);
  });

  afterAll(() => t.close());

  it('counts each minute of the last hour by outcome, oldest first, zeros included, this merchant only', async () => {
    const result = await http(t.url, '/vault-forward/activity', { token });
    expect(result.status).toBe(200);
    const body = result.body as {
      type: string;
      from: string;
      until: string;
      minutes: Array<Record<string, number | string>>;
    };
    expect(body.type).toBe('vault-forward-activity');
    expect(body.minutes).toHaveLength(60);
    expect(Date.parse(body.until)).toBe(Date.parse('2026-03-01T12:35:00Z'));
    expect(Date.parse(body.until) - Date.parse(body.from)).toBe(60 * 60_000);
    const starts = body.minutes.map((m) => Date.parse(m.minute as string));
    starts.forEach((start, i) => expect(start).toBe(Date.parse(body.from) + i * 60_000));
    const [oldest] = body.minutes;
    const current = body.minutes[59];
    expect(current).toMatchObject({ succeeded: 3, downstream_error: 1, failed: 1, pending: 1 });
    expect(body.minutes[54]).toMatchObject({ succeeded: 0, downstream_error: 1, failed: 0, pending: 0 });
    expect(oldest).toMatchObject({ succeeded: 1, downstream_error: 0, failed: 0, pending: 0 });
    const total = body.minutes.reduce(
      (sum, m) =>
        sum + (m.succeeded as number) + (m.downstream_error as number) + (m.failed as number) + (m.pending as number),
      0,
    );
    expect(total).toBe(8);
  });

  it('takes minutes=1..1440 and refuses anything else, naming the parameter', async () => {
    const one = await http(t.url, '/vault-forward/activity?minutes=1', { token });
    expect(one.status).toBe(200);
    expect(one.body.minutes).toHaveLength(1);
    expect(one.body.minutes[0]).toMatchObject({ succeeded: 3, downstream_error: 1, failed: 1, pending: 1 });
    expect((await http(t.url, '/vault-forward/activity?minutes=1440', { token })).body.minutes).toHaveLength(1440);
    for (const bad of ['0', '1441', 'abc', '1.5', '']) {
      const problem = expectProblem(
        await http(t.url, `/vault-forward/activity?minutes=${bad}`, { token }),
        400,
        'validation-failed',
      );
      expect(problem.errors).toEqual([expect.objectContaining({ location: 'query', name: 'minutes' })]);
    }
    expectProblem(await http(t.url, '/vault-forward/activity?since=1', { token }), 400, 'validation-failed');
  });

  it('needs vault-forwards.read and a token', async () => {
    const writeOnly = await (await createApiKey(t, merchant)).token(['vault-forwards.write']);
    expectProblem(await http(t.url, '/vault-forward/activity', { token: writeOnly }), 403, 'forbidden');
    expectProblem(await http(t.url, '/vault-forward/activity'), 401, 'unauthorized');
  });

  it('is documented with its scope and schema', async () => {
    const doc = (await http(t.url, '/openapi.json')).body;
    const op = doc.paths['/vault-forward/activity'].get;
    expect(op['x-required-scope']).toBe('vault-forwards.read');
    expect(op.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ForwardActivityResponse',
    );
    expect(Object.keys(doc.components.schemas.ForwardActivityMinute.properties).sort()).toEqual([
      'downstream_error',
      'failed',
      'minute',
      'pending',
      'succeeded',
    ]);
  });
});
