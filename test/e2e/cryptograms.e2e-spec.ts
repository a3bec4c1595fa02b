import { createApiKey } from '../factories/api-keys';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { startScriptedDownstream } from '../support/forward-jobs';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { randomBytes } from 'node:crypto';

/**
 * Per-request cryptograms from the caller (x-vault-forward-cryptograms) without a token requestor
 * (issue 23, item 2; decision 0100). The token requestor's are in network-tokens.e2e-spec.ts.
 */
describe('cryptograms from the caller', () => {
  let t: TestApp;
  let downstream: Awaited<ReturnType<typeof startScriptedDownstream>>;
  let token: string;
  let withToken: { id: string; value: string };
  let without: string;

  /** A TAVV-shaped cryptogram (20 random bytes, base64), random so that finding it anywhere means it leaked. */
  const cryptogram = () => randomBytes(20).toString('base64');

  beforeAll(async () => {
    downstream = await startScriptedDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    const merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Cryptograms', hosts: [`127.0.0.1:${downstream.port}`] },
    });
    expect(config.status).toBe(201);
    // The target answers without echoing what it got: an answer holding a value would be ours to explain.
    downstream.script('/pay', [{ status: 200, body: '{"ok":true}' }]);
    const card = await createCard(t, merchant);
    const value = cardNumber('4895', 16);
    const stored = await http(t.url, `/payment-methods/${card.id}/network-tokens`, {
      method: 'POST',
      token,
      body: { token: value, expiration_date: '03/28' },
    });
    expect(stored.status).toBe(201);
    withToken = { id: card.id, value };
    without = (await createCard(t, merchant)).id;
  }, 90_000);

  afterAll(async () => {
    await t?.close();
    await downstream?.close();
  }, 30_000);

  function forward(ids: string[], body: string, headers: Record<string, string> = {}) {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': ids.join(','),
        'content-type': 'application/json',
        ...headers,
      },
      rawBody: body,
    });
  }

  const sent = () => JSON.parse(downstream.requestsTo('/pay').at(-1)!.body.toString('utf8'));

  /** Every row of the tables a forward writes, as text (bytea as latin1). */
  async function rawRows(): Promise<string> {
    const tables = ['vault_forward_requests', 'vault_forward_idempotency_keys', 'vault_forward_jobs'];
    const texts: string[] = [];
    for (const table of tables) {
      const rows = await t.db.query(`SELECT * FROM ${table}`);
      for (const row of rows)
        texts.push(
          Object.values(row as Record<string, unknown>)
            .map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : JSON.stringify(v)))
            .join('|'),
        );
    }
    return texts.join('\n');
  }

  it('fills CARD_CRYPTOGRAM_X by position with the network token; a card without one gets "" from the twin', async () => {
    const given = cryptogram();
    const body =
      '{"t":"{{ CARD_NETWORK_TOKEN_1 }}","c":"{{ CARD_CRYPTOGRAM_1 }}","e":"{{ CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 }}",' +
      '"t2":"{{ CARD_NETWORK_TOKEN_OR_EMPTY_STRING_2 }}","c2":"{{ CARD_CRYPTOGRAM_OR_EMPTY_STRING_2 }}"}';
    const result = await forward([withToken.id, without], body, { 'x-vault-forward-cryptograms': `${given},` });
    expect(result.status).toBe(200);
    expect(sent()).toEqual({ t: withToken.value, c: given, e: given, t2: '', c2: '' });
    // In a header too, and in an {% if %}.
    const other = cryptogram();
    const headerResult = await forward(
      [withToken.id],
      '{"x":"{% if CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 %}yes{% endif %}"}',
      {
        'x-vault-forward-cryptograms': other,
        'x-vault-forward-header-x-cryptogram': '{{ CARD_CRYPTOGRAM_1 }}',
      },
    );
    expect(headerResult.status).toBe(200);
    expect(downstream.requestsTo('/pay').at(-1)!.headers['x-cryptogram']).toBe(other);
    expect(sent()).toEqual({ x: 'yes' });

    for (const secret of [given, other, withToken.value]) {
      expect(t.logs.text).not.toContain(secret);
      expect(JSON.stringify([result.body, headerResult.body])).not.toContain(secret);
      expect(await rawRows()).not.toContain(secret);
    }
  });

  it('without a cryptogram and without a token requestor: the plain name is a 400 naming the header, the twin is ""', async () => {
    const before = downstream.requestsTo('/pay').length;
    const refused = await forward([withToken.id], '{"c":"{{ CARD_CRYPTOGRAM_1 }}"}');
    expectProblem(refused, 400, 'invalid-placeholder');
    expect(refused.body.detail).toContain('CARD_CRYPTOGRAM_1');
    expect(refused.body.errors[0]).toMatchObject({ location: 'header', name: 'x-vault-forward-cryptograms' });
    // An empty position is no cryptogram either.
    const emptyAt = await forward([without, withToken.id], '{"c":"{{ CARD_CRYPTOGRAM_2 }}"}', {
      'x-vault-forward-cryptograms': `${cryptogram()},`,
    });
    expectProblem(emptyAt, 400, 'invalid-placeholder');
    expect(downstream.requestsTo('/pay').length).toBe(before);

    const empty = await forward([withToken.id], '{"c":"{{ CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 }}"}');
    expect(empty.status).toBe(200);
    expect(sent()).toEqual({ c: '' });
  });

  it('a plain one for a card without a network token is a 400 naming the card, whatever the caller sent', async () => {
    const given = cryptogram();
    const result = await forward([withToken.id, without], '{"c":"{{ CARD_CRYPTOGRAM_2 }}"}', {
      'x-vault-forward-cryptograms': `,${given}`,
    });
    expectProblem(result, 400, 'invalid-placeholder');
    expect(result.body.detail).toContain('CARD_CRYPTOGRAM_2');
    expect(result.body.detail).toContain(without);
    expect(result.body.errors[0]).toMatchObject({ location: 'header', name: 'x-vault-forward-payment-methods' });
    expect(JSON.stringify(result.body)).not.toContain(given);
  });

  it('refuses a malformed header naming it and the position, never echoing the value', async () => {
    const secret = cryptogram();
    const cases: Array<[string[], string, string]> = [
      [[withToken.id], `${secret} x`, 'position 1'],
      [[withToken.id], `${secret}"`, 'position 1'],
      [[withToken.id, without], `,short`, 'position 2'],
      [[withToken.id], `${secret},${secret}`, 'lists 2 positions'],
      [[withToken.id, without], ` , `, 'no cryptogram'],
    ];
    for (const [ids, value, says] of cases) {
      const result = await forward(ids, '{"c":"{{ CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 }}"}', {
        'x-vault-forward-cryptograms': value,
      });
      expectProblem(result, 400, 'invalid-forward-header');
      expect(result.body.errors[0]).toMatchObject({ location: 'header', name: 'x-vault-forward-cryptograms' });
      expect(result.body.detail).toContain(says);
      expect(JSON.stringify(result.body)).not.toContain(secret);
    }
    // With a checkout session (no network token) or no payment methods at all.
    const session = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-checkout-session': '00000000-0000-4000-8000-000000000000',
        'x-vault-forward-cryptograms': secret,
      },
    });
    expectProblem(session, 400, 'invalid-forward-header');
    expect(session.body.detail).toContain('x-vault-forward-payment-methods');
    // A misspelt header is refused as unknown, and its value is redacted from the logs all the same.
    const misspelt = await forward([withToken.id], '{"c":"{{ CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 }}"}', {
      'x-vault-forward-cryptogram': secret,
    });
    expectProblem(misspelt, 400, 'unknown-forward-header');
    expect(misspelt.body.detail).toContain('x-vault-forward-cryptograms');
    expect(JSON.stringify(misspelt.body)).not.toContain(secret);
    expect(t.logs.text).not.toContain(secret);
  });

  it('a queued forward refuses the header (a cryptogram is never stored), naming it, and queues nothing', async () => {
    const secret = cryptogram();
    const jobsBefore = (await t.db.query('SELECT count(*)::int AS n FROM vault_forward_jobs'))[0].n;
    const result = await forward([withToken.id], '{"c":"{{ CARD_CRYPTOGRAM_1 }}"}', {
      prefer: 'respond-async',
      'x-vault-forward-cryptograms': secret,
    });
    expectProblem(result, 400, 'invalid-forward-header');
    expect(result.body.errors[0]).toMatchObject({ location: 'header', name: 'x-vault-forward-cryptograms' });
    expect(result.body.detail).toContain('queued');
    expect((await t.db.query('SELECT count(*)::int AS n FROM vault_forward_jobs'))[0].n).toBe(jobsBefore);
    expect(JSON.stringify(result.body)).not.toContain(secret);
    expect(t.logs.text).not.toContain(secret);
  });
});
