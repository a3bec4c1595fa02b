import { randomBytes, randomUUID } from 'node:crypto';
import { cardNumber, createCard } from '../factories/cards';
import { createCheckoutSession } from '../factories/checkout-sessions';
import { createMerchantWithConfig } from '../factories/forwarding-merchants';
import { startScriptedDownstream } from '../support/forward-jobs';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/** 3-D Secure values on checkout sessions and the CARD_3DS_* placeholders (issue 23, item 3; decision 0101). */
describe('3-D Secure values of a checkout session', () => {
  let t: TestApp;
  let downstream: Awaited<ReturnType<typeof startScriptedDownstream>>;
  let token: string;
  let merchant: string;

  beforeAll(async () => {
    downstream = await startScriptedDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    ({ id: merchant, token } = await createMerchantWithConfig(t, downstream.port, '3DS'));
    downstream.script('/pay', [{ status: 200, body: '{"ok":true}' }]);
  }, 90_000);

  afterAll(async () => {
    await t?.close();
    await downstream?.close();
  }, 30_000);

  /** Random values, so that finding one anywhere means it leaked. */
  const threeDS = () => ({
    cavv: randomBytes(20).toString('base64'),
    eci: '05',
    version: '2.2.0',
    directory_response: 'C',
    authentication_response: 'Y',
    directory_transaction_id: randomUUID(),
    server_transaction_id: randomUUID(),
    scheme: 'visa',
  });

  const put = (sessionId: string, body: unknown) =>
    http(t.url, `/checkout/sessions/${sessionId}/three-d-secure`, { method: 'PUT', token, body });

  const forward = (headers: Record<string, string>, body: string) =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'content-type': 'application/json',
        ...headers,
      },
      rawBody: body,
    });
  const sent = () => JSON.parse(downstream.requestsTo('/pay').at(-1)!.body.toString('utf8'));

  const NAMES = {
    CAVV: 'cavv',
    ECI: 'eci',
    VERSION: 'version',
    DIRECTORY_RESPONSE: 'directory_response',
    AUTHENTICATION_RESPONSE: 'authentication_response',
    SERVER_TRANSACTION_ID: 'server_transaction_id',
    DS_TRANSACTION_ID: 'directory_transaction_id',
    SCHEME: 'scheme',
  } as const;

  it('are stored sealed, never answered, fill CARD_3DS_*_1 and their twins, and go with the session', async () => {
    const session = await createCheckoutSession(t, token, {
      card: { number: cardNumber(), expiration_date: '12/30', security_code: '123' },
    });
    const values = threeDS();
    const stored = await put(session.id, values);
    expect(stored.status).toBe(200);
    expect(stored.body.id).toBe(session.id);

    const body = JSON.stringify(
      Object.fromEntries(
        Object.keys(NAMES).flatMap((name) => [
          [name, `{{ CARD_3DS_${name}_1 }}`],
          [`${name}_or`, `{{ CARD_3DS_${name}_OR_EMPTY_STRING_1 }}`],
        ]),
      ),
    );
    const result = await forward({ 'x-vault-forward-checkout-session': session.id }, body);
    expect(result.status).toBe(200);
    const got = sent();
    for (const [name, field] of Object.entries(NAMES)) {
      expect([name, got[name], got[`${name}_or`]]).toEqual([name, values[field], values[field]]);
    }

    const read = await http(t.url, `/checkout/sessions/${session.id}`, { token });
    const [row] = await t.db.query(
      `SELECT row_to_json(s)::text AS text, three_d_secure_ciphertext FROM checkout_sessions s WHERE id = $1`,
      [session.id],
    );
    expect((row.three_d_secure_ciphertext as Buffer).length).toBeGreaterThan(28);
    const rawBlob = (row.three_d_secure_ciphertext as Buffer).toString('latin1');
    for (const secret of [values.cavv, values.directory_transaction_id, values.server_transaction_id]) {
      expect(JSON.stringify([stored.body, read.body, result.body])).not.toContain(secret);
      expect(row.text).not.toContain(secret);
      expect(rawBlob).not.toContain(secret);
      expect(t.logs.text).not.toContain(secret);
    }

    // Deleted with the session: nothing of it is left.
    expect((await http(t.url, `/checkout/sessions/${session.id}`, { method: 'DELETE', token })).status).toBe(204);
    expect(await t.db.query(`SELECT 1 FROM checkout_sessions WHERE id = $1`, [session.id])).toEqual([]);
  });

  it('expired sessions are erased with them; another card drops them', async () => {
    const session = await createCheckoutSession(t, token, {
      card: { number: cardNumber(), expiration_date: '12/30', security_code: '123' },
    });
    expect((await put(session.id, threeDS())).status).toBe(200);
    // Another card: the values belonged to the first one.
    const again = await http(t.url, `/checkout/sessions/${session.id}/fields`, {
      method: 'PUT',
      token,
      body: {
        payment_method: { method: 'card', number: cardNumber(), expiration_date: '11/30', security_code: '321' },
      },
    });
    expect(again.status).toBe(200);
    const [afterCard] = await t.db.query(`SELECT three_d_secure_ciphertext FROM checkout_sessions WHERE id = $1`, [
      session.id,
    ]);
    expect(afterCard.three_d_secure_ciphertext).toBeNull();

    expect((await put(session.id, threeDS())).status).toBe(200);
    await t.db.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      session.id,
    ]);
    expectProblem(await http(t.url, `/checkout/sessions/${session.id}`, { token }), 410, 'checkout-session-expired');
    const [erased] = await t.db.query(
      `SELECT three_d_secure_ciphertext, erased_at FROM checkout_sessions WHERE id = $1`,
      [session.id],
    );
    expect(erased.erased_at).not.toBeNull();
    expect(erased.three_d_secure_ciphertext).toBeNull();
  });

  it('without values: a plain name is a 400 naming the session and nothing is sent; the twins are ""', async () => {
    const session = await createCheckoutSession(t, token, {
      card: { number: cardNumber(), expiration_date: '12/30', security_code: '123' },
    });
    const before = downstream.requestsTo('/pay').length;
    const refused = await forward({ 'x-vault-forward-checkout-session': session.id }, '{"c":"{{ CARD_3DS_CAVV_1 }}"}');
    expectProblem(refused, 400, 'invalid-placeholder');
    expect(refused.body.detail).toContain('CARD_3DS_CAVV_1');
    expect(refused.body.errors[0]).toMatchObject({ location: 'header', name: 'x-vault-forward-checkout-session' });
    expect(downstream.requestsTo('/pay').length).toBe(before);
    const empty = await forward(
      { 'x-vault-forward-checkout-session': session.id },
      '{"c":"{{ CARD_3DS_CAVV_OR_EMPTY_STRING_1 }}","e":"{{ CARD_3DS_ECI_OR_EMPTY_STRING_1 }}"}',
    );
    expect(empty.status).toBe(200);
    expect(sent()).toEqual({ c: '', e: '' });

    // Stored without the optional ones: those are absent, plain → 400 (found when opened, nothing sent), twin → "".
    const { authentication_response: _a, server_transaction_id: _s, scheme: _c, ...required } = threeDS();
    expect((await put(session.id, required)).status).toBe(200);
    const partial = await forward(
      { 'x-vault-forward-checkout-session': session.id },
      '{"s":"{{ CARD_3DS_SERVER_TRANSACTION_ID_1 }}"}',
    );
    expectProblem(partial, 400, 'invalid-placeholder');
    const twin = await forward(
      { 'x-vault-forward-checkout-session': session.id },
      '{"s":"{{ CARD_3DS_SERVER_TRANSACTION_ID_OR_EMPTY_STRING_1 }}","e":"{{ CARD_3DS_ECI_1 }}"}',
    );
    expect(twin.status).toBe(200);
    expect(sent()).toEqual({ s: '', e: '05' });
  });

  it('stored payment methods have none: plain names are refused at the scan, twins are ""', async () => {
    const card = await createCard(t, merchant);
    const refused = await forward({ 'x-vault-forward-payment-methods': card.id }, '{"c":"{{ CARD_3DS_ECI_1 }}"}');
    expectProblem(refused, 400, 'invalid-placeholder');
    expect(refused.body.detail).toContain('CARD_3DS_ECI_OR_EMPTY_STRING_1');
    const empty = await forward(
      { 'x-vault-forward-payment-methods': card.id },
      '{"c":"{{ CARD_3DS_ECI_OR_EMPTY_STRING_1 }}"}',
    );
    expect(empty.status).toBe(200);
    expect(sent()).toEqual({ c: '' });
  });

  it('refuses malformed values naming the field, never echoing them, and a session without a card', async () => {
    const session = await createCheckoutSession(t, token, {
      card: { number: cardNumber(), expiration_date: '12/30', security_code: '123' },
    });
    const bad = await put(session.id, { ...threeDS(), cavv: 'secret cavv"<', eci: '5', directory_response: 'yes' });
    expectProblem(bad, 400, 'validation-failed');
    expect(bad.body.errors.map((e: { name: string }) => e.name).sort()).toEqual(['cavv', 'directory_response', 'eci']);
    expect(JSON.stringify(bad.body)).not.toContain('secret cavv');
    const empty = await createCheckoutSession(t, token);
    expectProblem(await put(empty.id, threeDS()), 409, 'checkout-session-has-no-card');
    expectProblem(await put(randomUUID(), threeDS()), 404, 'checkout-session-not-found');
  });
});
