import { cardNumber, createCard } from '../factories/cards';
import { createCheckoutSession } from '../factories/checkout-sessions';
import { createMerchantWithConfig, createMerchantWithToken } from '../factories/forwarding-merchants';
import { randomBytes } from 'node:crypto';
import {
  endedJob,
  queuedForwardEnv,
  startScriptedDownstream,
  startWorker,
  Step,
  WorkerProcess,
} from '../support/forward-jobs';
import { expectProblem, http } from '../support/http';
import { dropQueueKeys } from '../support/redis-keys';
import { startTestApp, TestApp } from '../support/test-app';

/** Network tokens of stored cards and the placeholders they fill (issue 23, item 2). */
describe('network tokens', () => {
  const env = {
    ...queuedForwardEnv(),
    // The token requestor is a path of the local downstream (set once it listens); decision 0100.
    NETWORK_TOKEN_REQUESTOR_URL: '',
    NETWORK_TOKEN_REQUESTOR_AUTHORIZATION: 'Bearer requestor-secret-7f3a',
    NETWORK_TOKEN_REQUESTOR_TIMEOUT_MS: '1000',
  };
  let t: TestApp;
  let worker: WorkerProcess;
  let downstream: Awaited<ReturnType<typeof startScriptedDownstream>>;
  let token: string;
  let merchant: string;

  beforeAll(async () => {
    downstream = await startScriptedDownstream();
    env.NETWORK_TOKEN_REQUESTOR_URL = `${downstream.url}/token-requestor`;
    t = await startTestApp({ env });
    worker = await startWorker(env);
    ({ id: merchant, token } = await createMerchantWithConfig(t, downstream.port, 'Tokens'));
  }, 90_000);

  afterAll(async () => {
    worker?.child.kill('SIGTERM');
    await worker?.exited;
    await t?.close();
    await downstream?.close();
    await dropQueueKeys(env.FORWARD_QUEUE_NAME);
  }, 30_000);

  /** A DPAN-shaped token, random so that finding it anywhere means it leaked. */
  const networkToken = () => cardNumber('4895', 16);

  function store(paymentMethodId: string, body: unknown) {
    return http(t.url, `/payment-methods/${paymentMethodId}/network-tokens`, { method: 'POST', token, body });
  }

  it('is stored sealed, answered with its last four digits only, listed and deleted', async () => {
    const card = await createCard(t, merchant, { number: cardNumber('4', 16) });
    const value = networkToken();
    const created = await store(card.id, { token: value, expiration_date: '07/29' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      type: 'network-token',
      id: expect.any(String),
      payment_method_id: card.id,
      status: 'active',
      expiration_date: '07/29',
      label: value.slice(-4),
      scheme: 'visa',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(created.body)).not.toContain(value);

    const [raw] = await t.db.query('SELECT * FROM payment_method_network_tokens WHERE id = $1', [created.body.id]);
    const rawText = Object.values(raw)
      .map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : String(v)))
      .join('|');
    expect(rawText).not.toContain(value);
    expect(rawText).not.toContain(value.slice(0, 12));

    const list = await http(t.url, `/payment-methods/${card.id}/network-tokens`, { token });
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([created.body]);

    const gone = await http(t.url, `/payment-methods/${card.id}/network-tokens/${created.body.id}`, {
      method: 'DELETE',
      token,
    });
    expect(gone.status).toBe(204);
    expect((await http(t.url, `/payment-methods/${card.id}/network-tokens`, { token })).body.items).toEqual([]);
    const again = await http(t.url, `/payment-methods/${card.id}/network-tokens/${created.body.id}`, {
      method: 'DELETE',
      token,
    });
    expectProblem(again, 404, 'network-token-not-found');
    expect(t.logs.text).not.toContain(value);
  });

  it('refuses a malformed token or expiry naming the field, never echoing the value, and an unknown card', async () => {
    const card = await createCard(t, merchant);
    const bad = await store(card.id, { token: '4895abc0123456789', expiration_date: '13/29' });
    expectProblem(bad, 400, 'validation-failed');
    expect(bad.body.errors.map((e: { name: string }) => e.name).sort()).toEqual(['expiration_date', 'token']);
    expect(JSON.stringify(bad.body)).not.toContain('4895abc0123456789');
    const other = await store('00000000-0000-4000-8000-000000000000', {
      token: networkToken(),
      expiration_date: '07/29',
    });
    expectProblem(other, 404, 'payment-method-not-found');
  });

  it("another merchant's card cannot receive, list or use a token", async () => {
    const card = await createCard(t, merchant);
    const { token: strangerToken } = await createMerchantWithToken(t);
    const list = await http(t.url, `/payment-methods/${card.id}/network-tokens`, { token: strangerToken });
    expectProblem(list, 404, 'payment-method-not-found');
  });

  describe('placeholders', () => {
    let withToken: { id: string; value: string };
    let without: string;

    beforeAll(async () => {
      const card = await createCard(t, merchant, { expiration_date: '12/30' });
      const value = networkToken();
      expect((await store(card.id, { token: value, expiration_date: '03/28' })).status).toBe(201);
      // A suspended token never fills a placeholder, even when it is the newest.
      expect(
        (await store(card.id, { token: networkToken(), expiration_date: '04/28', status: 'suspended' })).status,
      ).toBe(201);
      withToken = { id: card.id, value };
      without = (await createCard(t, merchant)).id;
    });

    function forward(ids: string[], body: string, queued = false) {
      return http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          ...(queued ? { prefer: 'respond-async' } : {}),
          'x-vault-forward-url': `${downstream.url}/pay`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': ids.join(','),
          'content-type': 'application/json',
        },
        rawBody: body,
      });
    }

    it('fill from the newest active token; the _OR_EMPTY_STRING variants give "" for a card without one', async () => {
      const names = ['', '_EXPIRATION_DATE', '_EXPIRATION_DATE_M', '_EXPIRATION_DATE_MM'];
      const more = ['_EXPIRATION_DATE_YY', '_EXPIRATION_DATE_YYYY', '_EXPIRATION_DATE_MMYY'];
      const body = JSON.stringify(
        Object.fromEntries(
          [...names, ...more].flatMap((suffix) => [
            [`a${suffix}`, `{{ CARD_NETWORK_TOKEN${suffix}_1 }}`],
            [`b${suffix}`, `{{ CARD_NETWORK_TOKEN${suffix}_OR_EMPTY_STRING_1 }}`],
            [`c${suffix}`, `{{ CARD_NETWORK_TOKEN${suffix}_OR_EMPTY_STRING_2 }}`],
          ]),
        ),
      );
      const result = await forward([withToken.id, without], body);
      expect(result.status).toBe(200);
      const sent = JSON.parse(downstream.requestsTo('/pay').at(-1)!.body.toString('utf8'));
      const expected = { '': withToken.value, _EXPIRATION_DATE: '03/28', _EXPIRATION_DATE_M: '3' } as Record<
        string,
        string
      >;
      Object.assign(expected, {
        _EXPIRATION_DATE_MM: '03',
        _EXPIRATION_DATE_YY: '28',
        _EXPIRATION_DATE_YYYY: '2028',
        _EXPIRATION_DATE_MMYY: '0328',
      });
      for (const [suffix, value] of Object.entries(expected)) {
        expect([sent[`a${suffix}`], sent[`b${suffix}`], sent[`c${suffix}`]]).toEqual([value, value, '']);
      }
      expect(t.logs.text).not.toContain(withToken.value);
    });

    it('fill the same when queued (Prefer: respond-async, sent by a worker); a missing token is refused when asked', async () => {
      const body = '{"t":"{{ CARD_NETWORK_TOKEN_1 }}","e":"{{ CARD_NETWORK_TOKEN_EXPIRATION_DATE_MMYY_1 }}"}';
      const accepted = await forward([withToken.id], body, true);
      expect(accepted.status).toBe(202);
      const job = await endedJob(t.url, token, accepted.body.id);
      expect(job.body.status).toBe('succeeded');
      expect(JSON.parse(downstream.requestsTo('/pay').at(-1)!.body.toString('utf8'))).toEqual({
        t: withToken.value,
        e: '0328',
      });
      // The stored answer keeps what a record may keep (decision 0113): the filled token withheld.
      expect(JSON.parse(JSON.parse(job.body.response.body).echo)).toEqual({ t: '[Redacted]', e: '0328' });
      const refused = await forward([without], '{"t":"{{ CARD_NETWORK_TOKEN_1 }}"}', true);
      expectProblem(refused, 400, 'invalid-placeholder');
      const rows = await t.db.query(`SELECT * FROM vault_forward_job_plans p WHERE p.job_id = $1`, [accepted.body.id]);
      expect(JSON.stringify(rows)).not.toContain(withToken.value);
    });

    it('a plain one for a card without a token is a 400 naming the card and the placeholder, and nothing is sent', async () => {
      const before = downstream.requestsTo('/pay').length;
      const result = await forward([withToken.id, without], '{"t":"{{ CARD_NETWORK_TOKEN_2 }}"}');
      expectProblem(result, 400, 'invalid-placeholder');
      expect(result.body.detail).toContain('CARD_NETWORK_TOKEN_2');
      expect(result.body.detail).toContain(without);
      expect(result.body.errors[0]).toMatchObject({ location: 'header', name: 'x-vault-forward-payment-methods' });
      expect(downstream.requestsTo('/pay').length).toBe(before);
      const expiry = await forward([without], '{"t":"{{ CARD_NETWORK_TOKEN_EXPIRATION_DATE_MMYY_1 }}"}');
      expectProblem(expiry, 400, 'invalid-placeholder');
      expect(JSON.stringify([result.body, expiry.body])).not.toContain(withToken.value);
    });

    describe('cryptograms from the token requestor', () => {
      /** A TAVV-shaped cryptogram, random so that finding it anywhere means it leaked. */
      const cryptogram = () => randomBytes(20).toString('base64');
      const quiet = (ids: string[], body: string, headers: Record<string, string> = {}) =>
        http(t.url, '/vault-forward', {
          method: 'POST',
          token,
          headers: {
            'x-vault-forward-url': `${downstream.url}/quiet`,
            'x-vault-forward-http-method': 'POST',
            'x-vault-forward-payment-methods': ids.join(','),
            'content-type': 'application/json',
            ...headers,
          },
          rawBody: body,
        });
      const lastSent = () => JSON.parse(downstream.requestsTo('/quiet').at(-1)!.body.toString('utf8'));
      // The target answers without echoing: what the caller gets back is ours alone.
      beforeAll(() => downstream.script('/quiet', [{ status: 200, body: '{"ok":true}' }]));

      it('is asked (token, expiry, card, authorization) when the caller sent none; the caller’s wins', async () => {
        const issued = cryptogram();
        downstream.script('/token-requestor', [{ status: 200, body: JSON.stringify({ cryptogram: issued }) }]);
        const asked = downstream.requestsTo('/token-requestor').length;
        const body =
          '{"t":"{{ CARD_NETWORK_TOKEN_1 }}","c":"{{ CARD_CRYPTOGRAM_1 }}","d":"{{ CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 }}"}';
        const result = await quiet([withToken.id], body, { 'x-vault-forward-merchant-initiated': 'true' });
        expect(result.status).toBe(200);
        expect(lastSent()).toEqual({ t: withToken.value, c: issued, d: issued });
        const requests = downstream.requestsTo('/token-requestor');
        expect(requests.length).toBe(asked + 1); // once per card, however many placeholders use it
        const request = requests.at(-1)!;
        expect(request.method).toBe('POST');
        expect(request.headers.authorization).toBe(env.NETWORK_TOKEN_REQUESTOR_AUTHORIZATION);
        expect(JSON.parse(request.body.toString('utf8'))).toEqual({
          payment_method_id: withToken.id,
          network_token_id: expect.any(String),
          network_token: withToken.value,
          expiration_date: '03/28',
          merchant_initiated: true,
        });

        const given = cryptogram();
        const own = await quiet([withToken.id], '{"c":"{{ CARD_CRYPTOGRAM_1 }}"}', {
          'x-vault-forward-cryptograms': given,
        });
        expect(own.status).toBe(200);
        expect(lastSent()).toEqual({ c: given });
        expect(downstream.requestsTo('/token-requestor').length).toBe(asked + 1);
        // A card without a network token is never asked about: its twin is "".
        const none = await quiet([without], '{"c":"{{ CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 }}"}');
        expect(none.status).toBe(200);
        expect(lastSent()).toEqual({ c: '' });
        expect(downstream.requestsTo('/token-requestor').length).toBe(asked + 1);

        for (const secret of [issued, given, withToken.value, 'requestor-secret-7f3a']) {
          expect(t.logs.text).not.toContain(secret);
          expect(JSON.stringify([result.body, own.body])).not.toContain(secret);
        }
      });

      it('failing is a 502, slow a 504, both marked ours and naming no value; nothing is sent to the target', async () => {
        const sentBefore = downstream.requestsTo('/quiet').length;
        const cases: Array<[Step, number, string]> = [
          [{ status: 500, body: '{"error":"down"}' }, 502, 'token-requestor-failed'],
          [{ status: 200, body: '{"cryptogram":"not one, with spaces"}' }, 502, 'token-requestor-failed'],
          [{ status: 200, body: 'no json' }, 502, 'token-requestor-failed'],
          // A redirect is not followed, and an answer past 16 KiB is not read whole.
          [{ status: 302, headers: { location: '/token-requestor' } }, 502, 'token-requestor-failed'],
          [{ status: 200, body: JSON.stringify({ cryptogram: 'A'.repeat(20_000) }) }, 502, 'token-requestor-failed'],
          [
            { status: 200, body: JSON.stringify({ cryptogram: cryptogram() }), delayMs: 3000 },
            504,
            'token-requestor-timeout',
          ],
        ];
        for (const [step, status, code] of cases) {
          downstream.script('/token-requestor', [step]);
          const result = await quiet([withToken.id], '{"c":"{{ CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 }}"}');
          expectProblem(result, status, code);
          expect(result.headers.get('x-vault-forward-error')).toBe('true');
          expect(JSON.stringify(result.body)).not.toContain(withToken.value);
          expect(JSON.stringify(result.body)).not.toContain('not one');
        }
        expect(downstream.requestsTo('/quiet').length).toBe(sentBefore);
        expect(t.logs.text).toContain('token requestor answered more than 16384 bytes');
        expect(t.logs.text).not.toContain(withToken.value);
      }, 30_000);

      it('a queued forward asks it from the worker; no cryptogram in the plan, job or logs', async () => {
        const issued = cryptogram();
        downstream.script('/token-requestor', [{ status: 200, body: JSON.stringify({ cryptogram: issued }) }]);
        const accepted = await quiet([withToken.id], '{"c":"{{ CARD_CRYPTOGRAM_1 }}"}', { prefer: 'respond-async' });
        expect(accepted.status).toBe(202);
        const job = await endedJob(t.url, token, accepted.body.id);
        expect(job.body.status).toBe('succeeded');
        expect(lastSent()).toEqual({ c: issued });
        const rows = await t.db.query(
          `SELECT j.*, p.* FROM vault_forward_jobs j LEFT JOIN vault_forward_job_plans p ON p.job_id = j.id WHERE j.id = $1`,
          [accepted.body.id],
        );
        const rawText = JSON.stringify(rows, (_, v: unknown) =>
          v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer'
            ? Buffer.from((v as { data: number[] }).data).toString('latin1')
            : v,
        );
        for (const secret of [issued, withToken.value]) {
          expect(rawText).not.toContain(secret);
          expect(JSON.stringify(job.body)).not.toContain(secret);
          expect(t.logs.text).not.toContain(secret);
          expect(worker.output()).not.toContain(secret);
        }
      });
    });

    it('a checkout session has no network token: plain names are refused at the scan, _OR_EMPTY_STRING ones are ""', async () => {
      const session = await createCheckoutSession(t, token, {
        card: { number: cardNumber(), expiration_date: '12/30', security_code: '123' },
      });
      const send = (body: string) =>
        http(t.url, '/vault-forward', {
          method: 'POST',
          token,
          headers: {
            'x-vault-forward-url': `${downstream.url}/pay`,
            'x-vault-forward-http-method': 'POST',
            'x-vault-forward-checkout-session': session.id,
            'content-type': 'application/json',
          },
          rawBody: body,
        });
      const refused = await send('{"t":"{{ CARD_NETWORK_TOKEN_1 }}"}');
      expectProblem(refused, 400, 'invalid-placeholder');
      expect(refused.body.detail).toContain('_OR_EMPTY_STRING');
      const empty = await send('{"t":"{{ CARD_NETWORK_TOKEN_OR_EMPTY_STRING_1 }}"}');
      expect(empty.status).toBe(200);
      expect(JSON.parse(downstream.requestsTo('/pay').at(-1)!.body.toString('utf8'))).toEqual({ t: '' });
    });
  });
});
