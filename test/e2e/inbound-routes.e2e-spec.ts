import { createHmac, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { cardNumber } from '../factories/cards';
import { createMerchantWithConfig, MerchantWithToken } from '../factories/forwarding-merchants';
import { Downstream, selfSignedCertificate, startHttpsDownstream } from '../support/downstream';
import { expectProblem, http } from '../support/http';
import {
  Answer,
  send,
  standardWebhookSignature,
  startTerminator,
  startUpstream,
  Upstream,
} from '../support/inbound-partner';
import { InboundRequestBodyPurge } from '../../src/modules/inbound/records/inbound-request-body-purge';
import { KeyRotationService } from '../../src/modules/vault/key-rotation.service';
import { MetricsServer } from '../../src/platform/metrics/metrics.server';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { dataDump, stringsOf } from '../support/sink-texts';
import { testTempDir } from '../support/temp-data-dir';
import { TestCa } from '../support/test-pki';
import { startTestApp, TEST_MASTER_KEY_1, TEST_MASTER_KEY_2, TestApp } from '../support/test-app';

/**
 * Issue 50: a partner's request with card data reaches the merchant's upstream holding payment method and checkout
 * session ids only, signed with the merchant's webhook secret; the ids then forward to a PSP stand-in, which gets
 * the original number and code, the code once. Callers without their secret, signature or certificate are refused
 * before anything is stored; bad bodies, another merchant's route and an upstream that is not public are clear
 * problems; nothing of the cards is in the log, the records or the database but the sealed rows.
 */
const CERT_HEADER = 'x-client-cert';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/** Whether `text` holds `code` as a word of its own, UUIDs (which may hold it as a group) taken out. */
const holds = (text: string, code: string) => new RegExp(`\\b${code}\\b`).test(text.replace(UUIDS, 'uuid'));

describe('Inbound routes (issue 50)', () => {
  let database: IsolatedDatabase;
  let t: TestApp;
  let upstream: Upstream;
  let psp: Downstream;
  let terminator: { url: string; close(): Promise<void> };
  let merchant: MerchantWithToken;
  let webhookSecret: string;
  let partnerCa: TestCa;
  let otherCa: TestCa;
  let terminatorCa: TestCa;
  const cards: string[] = [];
  const codes: string[] = [];
  /** Upstream header values: secrets of the merchant's, never answered, logged or stored in the clear. */
  const headerSecrets: string[] = [];
  /** The route with upstream headers, as its last test left it: used again once the master key is rotated. */
  let headersRoute: { id: string; secret: string; token: string };
  let appEnv: Record<string, string>;
  const leaked = cardNumber('4', 16);

  const card = (prefix = '4', length = 16) => {
    const number = cardNumber(prefix, length);
    cards.push(number);
    return number;
  };
  const code = (digits: string) => {
    codes.push(digits);
    return digits;
  };

  async function createRoute(body: Record<string, unknown>, token = merchant.token): Promise<string> {
    const created = await http(t.url, '/vault-forward/inbound-routes', {
      method: 'POST',
      token,
      body: { display_name: 'Partner', upstream_url: `${upstream.url}/inbound`, ...body },
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  }

  const countRows = async (table: 'payment_methods' | 'checkout_sessions') =>
    Number((await t.db.query(`SELECT count(*) AS n FROM ${table} WHERE merchant_account_id = $1`, [merchant.id]))[0].n);
  const countPaymentMethods = () => countRows('payment_methods');

  /** What reached the upstream last, its Standard Webhooks signature checked with the merchant's secret. */
  function lastSigned(): { body: string; headers: Upstream['received'][number]['headers'] } {
    const last = upstream.received.at(-1)!;
    const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = last.headers;
    expect(signature).toBe(standardWebhookSignature(webhookSecret, String(id), String(timestamp), last.body));
    return last;
  }

  function forward(headers: Record<string, string>, body: string) {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token: merchant.token,
      headers: {
        'x-vault-forward-url': `${psp.url}/charge`,
        'x-vault-forward-http-method': 'POST',
        'content-type': 'application/json',
        ...headers,
      },
      rawBody: body,
    });
  }

  beforeAll(async () => {
    const certificate = await selfSignedCertificate();
    const caFile = join(testTempDir('vf-inbound-ca-'), 'ca.pem');
    writeFileSync(caFile, certificate.cert);
    [upstream, psp] = await Promise.all([startUpstream(certificate, leaked), startHttpsDownstream(certificate)]);
    database = await createIsolatedDatabase('inbound_routes');
    appEnv = {
      DATABASE_URL: database.url,
      FORWARD_INSECURE_HOSTS: '127.0.0.1',
      FORWARD_EXTRA_CA_FILE: caFile,
      INBOUND_CLIENT_CERT_HEADER: CERT_HEADER,
    };
    t = await startTestApp({ env: { ...appEnv, METRICS_PORT: '0' } });
    [partnerCa, otherCa, terminatorCa] = [
      TestCa.create('partner-ca'),
      TestCa.create('other-ca'),
      TestCa.create('edge-ca'),
    ];
    terminator = await startTerminator(
      terminatorCa.issue('edge', 'server'),
      [partnerCa.cert, otherCa.cert],
      t.url,
      CERT_HEADER,
    );
    merchant = await createMerchantWithConfig(t, psp.port, 'PSP', ['POST']);
    webhookSecret = (await http(t.url, '/vault-forward/webhook-secrets', { method: 'POST', token: merchant.token }))
      .body.secret as string;
  });

  afterAll(async () => {
    await Promise.all([upstream?.close(), psp?.close(), terminator?.close()]);
    await t?.close();
    await database?.drop();
  });

  it('JSON with several cards, expiries, names and codes: the upstream gets ids; the ids forward to the PSP, the code once', async () => {
    const secret = 'partner-shared-secret-0123456789';
    const route = await createRoute({
      caller_authentication: { kind: 'shared-secret', header: 'x-partner-key', secret },
      path_prefixes: ['/bookings'],
      field_mappings: {
        json: {
          card_number: '/cards/*/number',
          expiration_date: '/cards/*/expiry',
          cardholder_name: '/cards/*/holder',
          security_code: '/cards/*/cvv',
        },
      },
    });
    const [visa, mastercard] = [card('4'), card('51')];
    const body = JSON.stringify({
      booking: 'B-1',
      cards: [
        {
          number: `${visa.slice(0, 4)} ${visa.slice(4, 8)} ${visa.slice(8, 12)} ${visa.slice(12)}`,
          expiry: '12/30',
          holder: 'Ada Lovelace',
          cvv: code('911'),
        },
        { number: Number(mastercard), expiry: '2031-01', holder: 'Grace Hopper', cvv: code('822') },
      ],
    });
    const answer = await send(`${t.url}/vault-inbound/${route}/bookings/7?lang=en`, {
      headers: { 'content-type': 'application/json', 'x-partner-key': secret },
      body,
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ ok: true });
    const reached = lastSigned();
    expect(upstream.received.at(-1)!.url).toBe('/inbound/bookings/7?lang=en');
    expect(reached.headers['x-partner-key']).toBeUndefined();
    expect(reached.headers['x-vault-inbound-route-id']).toBe(route);
    const sent = JSON.parse(reached.body) as { booking: string; cards: Array<Record<string, string>> };
    expect(sent.booking).toBe('B-1');
    for (const each of sent.cards) {
      expect(each.number).toMatch(UUID);
      expect(each.cvv).toMatch(UUID);
    }
    expect(sent.cards.map((c) => [c.expiry, c.holder])).toEqual([
      ['12/30', 'Ada Lovelace'],
      ['2031-01', 'Grace Hopper'],
    ]);
    for (const secretText of [visa, mastercard, '911', '822']) expect(reached.body).not.toContain(secretText);

    const stored = await http(t.url, `/payment-methods/${sent.cards[1].number}`, { token: merchant.token });
    expect(stored.body).toMatchObject({ label: mastercard.slice(-4), expiration_date: '01/31' });

    // The outbound leg: the payment methods' numbers, and a session's number and code, once.
    const both = await forward(
      { 'x-vault-forward-payment-methods': `${sent.cards[0].number},${sent.cards[1].number}` },
      '{"a":"{{ CARD_NUMBER_1 }}","b":"{{ CARD_NUMBER_2 }}","name":"{{ CARDHOLDER_NAME_1 }}"}',
    );
    expect(both.status).toBe(200);
    expect(JSON.parse(psp.received.at(-1)!.body.toString())).toEqual({ a: visa, b: mastercard, name: 'Ada Lovelace' });
    const full =
      '{"number":"{{ CARD_NUMBER_1 }}","cvv":"{{ CARD_SECURITY_CODE_1 }}","expiry":"{{ CARD_EXPIRATION_DATE_1 }}"}';
    expect((await forward({ 'x-vault-forward-checkout-session': sent.cards[0].cvv }, full)).status).toBe(200);
    expect(JSON.parse(psp.received.at(-1)!.body.toString())).toEqual({ number: visa, cvv: '911', expiry: '12/30' });
    expectProblem(
      await forward({ 'x-vault-forward-checkout-session': sent.cards[0].cvv }, full),
      410,
      'checkout-session-security-code-erased',
    );

    // The same card again is the same payment method; its record names what was stored, never a value.
    const again = await send(`${t.url}/vault-inbound/${route}/bookings`, {
      headers: { 'content-type': 'application/json', 'x-partner-key': secret },
      body: JSON.stringify({ cards: [{ number: visa, expiry: '12/30' }] }),
    });
    expect(again.status).toBe(200);
    expect(JSON.parse(lastSigned().body).cards[0].number).toBe(sent.cards[0].number);
    const records = await http(t.url, `/vault-forward/inbound-requests?route_id=${route}`, { token: merchant.token });
    expect(records.body.items[1]).toMatchObject({
      route_id: route,
      caller: 'shared-secret',
      method: 'POST',
      path: '/bookings/7',
      outcome: 'sent',
      status: 200,
      upstream_status: 200,
      payment_method_ids: [sent.cards[0].number, sent.cards[1].number],
      checkout_session_ids: [sent.cards[0].cvv, sent.cards[1].cvv],
    });
  });

  it('XML signed with Standard Webhooks: each card element’s number and code become ids in place', async () => {
    const secret = `whsec_${Buffer.from('partner-standard-webhooks-key-01').toString('base64')}`;
    const route = await createRoute({
      caller_authentication: { kind: 'hmac', scheme: 'standard-webhooks', secret },
      field_mappings: {
        xml: {
          expiration_month: '/booking/card/month',
          expiration_year: '/booking/card/year',
          cardholder_name: '/booking/card/name',
          security_code: '/booking/card/cvc',
        },
      },
    });
    const [amex, visa] = [card('37', 15), card('4')];
    const xml =
      `<?xml version="1.0" encoding="UTF-8"?>\n<booking id="B-2">` +
      `<card><number>${amex}</number><month>3</month><year>2032</year><name>Alan Turing</name><cvc>${code('7373')}</cvc></card>` +
      `<card><number><![CDATA[${visa}]]></number><month>11</month><year>29</year><cvc>${code('733')}</cvc></card></booking>`;
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers = {
      'content-type': 'application/xml',
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': standardWebhookSignature(secret, id, timestamp, xml),
    };
    const answer = await send(`${t.url}/vault-inbound/${route}/`, { headers, body: xml });
    expect(answer.status).toBe(200);
    const reached = lastSigned().body;
    expect(reached.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<booking id="B-2"><card><number>')).toBe(true);
    const ids = [...reached.matchAll(/<number>(?:<!\[CDATA\[)?([^<\]]+)/g)].map((m) => m[1]);
    const sessions = [...reached.matchAll(/<cvc>([^<]+)<\/cvc>/g)].map((m) => m[1]);
    expect([...ids, ...sessions].every((value) => UUID.test(value))).toBe(true);
    expect(reached).toContain('<month>3</month><year>2032</year><name>Alan Turing</name>');
    for (const secretText of [amex, visa]) expect(reached).not.toContain(secretText);
    for (const codeText of ['7373', '733']) expect(holds(reached, codeText)).toBe(false);
    const amexCard = await http(t.url, `/payment-methods/${ids[0]}`, { token: merchant.token });
    expect(amexCard.body).toMatchObject({ expiration_date: '03/32', scheme: 'amex' });
    expect(
      (
        await forward(
          { 'x-vault-forward-checkout-session': sessions[0] },
          '"{{ CARD_NUMBER_1 }} {{ CARD_SECURITY_CODE_1 }}"',
        )
      ).status,
    ).toBe(200);
    expect(psp.received.at(-1)!.body.toString()).toBe(`"${amex} 7373"`);
  });

  it('a form signed with HMAC-SHA256, its codes found by name: ids in place, the rest as sent', async () => {
    const secret = 'form-partner-hmac-secret-value-1';
    const route = await createRoute({
      caller_authentication: { kind: 'hmac', scheme: 'hmac-sha256', header: 'x-signature', secret },
      field_mappings: { form: { expiration_date: 'cards[*][exp]', cardholder_name: 'cards[*][name]' } },
    });
    const [first, second] = [card('4'), card('55')];
    const form =
      `ref=B%2D3&cards[0][number]=${first}&cards[0][exp]=09%2F33&cards[0][name]=Ada+Lovelace&cards[0][cvc]=${code('644')}` +
      `&cards[1][number]=${second.slice(0, 8)}+${second.slice(8)}&cards[1][exp]=10/34&cards[1][cvc]=${code('655')}`;
    const signature = `sha256=${createHmac('sha256', secret).update(form).digest('hex')}`;
    const answer = await send(`${t.url}/vault-inbound/${route}/forms`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-signature': signature },
      body: form,
    });
    expect(answer.status).toBe(200);
    const reached = new URLSearchParams(lastSigned().body);
    expect(reached.get('ref')).toBe('B-3');
    expect(reached.get('cards[0][name]')).toBe('Ada Lovelace');
    for (const name of ['cards[0][number]', 'cards[0][cvc]', 'cards[1][number]', 'cards[1][cvc]'])
      expect(reached.get(name)).toMatch(UUID);
    const withCode = await forward(
      { 'x-vault-forward-checkout-session': reached.get('cards[1][cvc]')! },
      '"{{ CARD_NUMBER_1 }}/{{ CARD_SECURITY_CODE_1 }}/{{ CARD_EXPIRATION_DATE_1 }}"',
    );
    expect(withCode.status).toBe(200);
    expect(psp.received.at(-1)!.body.toString()).toBe(`"${second}/655/10/34"`);
  });

  it('mutual TLS through the terminator: a certificate of the route’s authority passes, none or another’s is refused', async () => {
    const route = await createRoute({
      caller_authentication: { kind: 'mutual-tls', ca_certificates: partnerCa.cert },
      field_mappings: { json: { expiration_date: '/expiry' } },
    });
    const body = JSON.stringify({ number: card('4'), expiry: '01/30' });
    const headers = { 'content-type': 'application/json' };
    const url = `${terminator.url}/vault-inbound/${route}/`;
    const ok = await send(url, { headers, body }, { ca: terminatorCa.cert, ...partnerCa.issue('partner', 'client') });
    expect(ok.status).toBe(200);
    expect(JSON.parse(lastSigned().body).number).toMatch(UUID);
    const records = await http(t.url, `/vault-forward/inbound-requests?route_id=${route}`, { token: merchant.token });
    expect(records.body.items[0].caller).toMatch(/^mutual-tls CN=partner sha256:[0-9a-f]{64}$/);

    const before = await countPaymentMethods();
    const received = upstream.received.length;
    const refusals: Answer[] = [
      await send(
        url,
        { headers, body: JSON.stringify({ number: card('4'), expiry: '01/30' }) },
        { ca: terminatorCa.cert },
      ),
      await send(
        url,
        { headers, body: JSON.stringify({ number: card('4'), expiry: '01/30' }) },
        { ca: terminatorCa.cert, ...otherCa.issue('intruder', 'client') },
      ),
    ];
    expect(refusals.map((r) => [r.status, JSON.parse(r.text).code])).toEqual([
      [401, 'inbound-caller-unauthenticated'],
      [401, 'inbound-caller-unauthenticated'],
    ]);
    expect(await countPaymentMethods()).toBe(before);
    expect(upstream.received.length).toBe(received);
  });

  it('a caller without the route’s secret or signature is refused before anything is stored or sent', async () => {
    const shared = await createRoute({
      caller_authentication: { kind: 'shared-secret', header: 'x-partner-key', secret: 'the-right-secret-0123456789' },
    });
    const signed = await createRoute({
      caller_authentication: {
        kind: 'hmac',
        scheme: 'standard-webhooks',
        secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}`,
      },
    });
    const before = await countPaymentMethods();
    const received = upstream.received.length;
    const body = () => JSON.stringify({ number: card('4'), expiry: '02/31', cvv: code('101') });
    const json = { 'content-type': 'application/json' };
    const stale = String(Math.floor(Date.now() / 1000) - 3600);
    const wrongKey = `whsec_${Buffer.alloc(24, 8).toString('base64')}`;
    const refusals = [
      await send(`${t.url}/vault-inbound/${shared}/`, { headers: json, body: body() }),
      await send(`${t.url}/vault-inbound/${shared}/`, {
        headers: { ...json, 'x-partner-key': 'the-wrong-secret-0123456789' },
        body: body(),
      }),
      await send(`${t.url}/vault-inbound/${signed}/`, { headers: json, body: body() }),
      await (async () => {
        const text = body();
        const now = String(Math.floor(Date.now() / 1000));
        const headers = {
          ...json,
          'webhook-id': 'msg_1',
          'webhook-timestamp': now,
          'webhook-signature': standardWebhookSignature(wrongKey, 'msg_1', now, text),
        };
        return send(`${t.url}/vault-inbound/${signed}/`, { headers, body: text });
      })(),
      await (async () => {
        const text = body();
        const key = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
        const headers = {
          ...json,
          'webhook-id': 'msg_2',
          'webhook-timestamp': stale,
          'webhook-signature': standardWebhookSignature(key, 'msg_2', stale, text),
        };
        return send(`${t.url}/vault-inbound/${signed}/`, { headers, body: text });
      })(),
    ];
    for (const refusal of refusals) {
      expect(refusal.status).toBe(401);
      expect(refusal.headers['x-vault-forward-error']).toBe('true');
      expect(JSON.parse(refusal.text)).toMatchObject({ code: 'inbound-caller-unauthenticated' });
    }
    expect(await countPaymentMethods()).toBe(before);
    expect(upstream.received.length).toBe(received);
    // No record for a caller that did not prove itself: counted apart, as recorded="false".
    const scrape = await (await fetch(`http://127.0.0.1:${t.get(MetricsServer).port}/metrics`)).text();
    const unrecorded = /^vault_forward_inbound_requests_total\{outcome="refused",recorded="false"\} (\d+)$/m.exec(
      scrape,
    );
    expect(Number(unrecorded?.[1])).toBeGreaterThanOrEqual(refusals.length);
    const records = await http(t.url, `/vault-forward/inbound-requests?route_id=${signed}`, { token: merchant.token });
    expect(records.body.items).toEqual([]);
  });

  it('over the cap, a bad encoding, a body that does not parse, unusable card data: clear problems, nothing sent', async () => {
    const secret = 'limits-partner-secret-0123456789';
    const route = await createRoute({
      caller_authentication: { kind: 'shared-secret', header: 'x-partner-key', secret },
      max_body_bytes: 2048,
      field_mappings: { json: { security_code: '/cvv', expiration_date: '/expiry' } },
    });
    const url = `${t.url}/vault-inbound/${route}/`;
    const headers = (extra: Record<string, string> = {}) => ({
      'content-type': 'application/json',
      'x-partner-key': secret,
      ...extra,
    });
    const received = upstream.received.length;
    const before = await countPaymentMethods();
    const cases: Array<[Answer, number, string]> = [
      [
        await send(url, { headers: headers(), body: JSON.stringify({ pad: 'x'.repeat(3000), number: card('4') }) }),
        413,
        'payload-too-large',
      ],
      [
        await send(url, { headers: headers({ 'content-encoding': 'gzip' }), body: Buffer.from('not gzip at all') }),
        400,
        'inbound-body-unreadable',
      ],
      [
        await send(url, {
          headers: headers({ 'content-encoding': 'gzip' }),
          body: gzipSync(Buffer.alloc(200_000, 0x20)),
        }),
        400,
        'inbound-body-unreadable',
      ],
      [
        await send(url, { headers: headers(), body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) }),
        400,
        'inbound-body-unreadable',
      ],
      [
        await send(url, { headers: headers({ 'content-type': 'application/json; charset=iso-8859-1' }), body: '{}' }),
        415,
        'inbound-unsupported-charset',
      ],
      [await send(url, { headers: headers(), body: `{"number": "${card('4')}",}` }), 400, 'inbound-body-unparseable'],
      [
        await send(url, { headers: headers({ 'content-type': 'application/xml' }), body: `<a><b>${card('4')}</a>` }),
        400,
        'inbound-body-unparseable',
      ],
      [
        await send(url, { headers: headers(), body: JSON.stringify({ number: card('4') }) }),
        422,
        'inbound-card-data-unusable',
      ],
      [
        await send(url, { headers: headers(), body: JSON.stringify({ cvv: code('303') }) }),
        422,
        'inbound-card-data-unusable',
      ],
      [
        await send(url, { headers: headers(), body: JSON.stringify({ number: card('4'), expiry: 'soon', cvv: '12' }) }),
        422,
        'inbound-card-data-unusable',
      ],
      [await send(`${url}?pan=${card('4')}`, { headers: headers(), body: '{}' }), 422, 'inbound-card-data-unusable'],
      [await send(url, { method: 'GET', headers: headers() }), 405, 'inbound-method-not-allowed'],
      [await send(`${url}a/../b`, { headers: headers(), body: '{}' }), 404, 'inbound-path-not-routed'],
      [
        await send(`${t.url}/vault-inbound/${randomUUID()}/`, { headers: headers(), body: '{}' }),
        404,
        'inbound-route-not-found',
      ],
    ];
    for (const [answer, status, problem] of cases)
      expect([answer.status, JSON.parse(answer.text).code]).toEqual([status, problem]);
    expect(cases[7][0].text).toContain('no expiry');
    expect(upstream.received.length).toBe(received);
    expect(await countPaymentMethods()).toBe(before);
    // A gzip body within the caps is read decoded, and goes on decoded.
    const gzipped = await send(url, {
      headers: headers({ 'content-encoding': 'gzip' }),
      body: gzipSync(JSON.stringify({ number: card('4'), expiry: '03/33' })),
    });
    expect(gzipped.status).toBe(200);
    expect(upstream.received.at(-1)!.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(lastSigned().body).number).toMatch(UUID);
  });

  it('another merchant’s route, an upstream that is not public, no webhook secret, a rate limit: clear problems', async () => {
    const other = await createMerchantWithConfig(t, psp.port, 'Other');
    const route = await createRoute({
      caller_authentication: { kind: 'none', rate_limit: { requests: 2, per_seconds: 3600 } },
    });
    for (const method of ['GET', 'PUT', 'DELETE'])
      expectProblem(
        await http(t.url, `/vault-forward/inbound-routes/${route}`, {
          method,
          token: other.token,
          ...(method === 'PUT' ? { body: {} } : {}),
        }),
        404,
        'inbound-route-not-found',
      );
    for (const upstreamUrl of ['https://10.0.0.8/in', 'http://93.184.215.14/in', 'https://[::1]/in'])
      expect(
        (
          await http(t.url, '/vault-forward/inbound-routes', {
            method: 'POST',
            token: merchant.token,
            body: {
              display_name: 'x',
              upstream_url: upstreamUrl,
              caller_authentication: { kind: 'none', rate_limit: { requests: 1, per_seconds: 1 } },
            },
          })
        ).body.errors,
      ).toEqual([expect.objectContaining({ name: 'upstream_url' })]);
    const loopbackByName = await createRoute({
      upstream_url: `https://localhost:${upstream.url.split(':').at(-1)}/in`,
      caller_authentication: { kind: 'none', rate_limit: { requests: 5, per_seconds: 60 } },
    });
    const guarded = await send(`${t.url}/vault-inbound/${loopbackByName}/`, {
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect([guarded.status, JSON.parse(guarded.text).code]).toEqual([403, 'target-address-forbidden']);
    expect(JSON.parse(guarded.text).errors).toEqual([
      expect.objectContaining({ location: 'body', name: 'upstream_url' }),
    ]);

    // The other merchant has no webhook secret: a card is neither stored nor sent.
    const unsigned = await createRoute(
      { caller_authentication: { kind: 'none', rate_limit: { requests: 5, per_seconds: 60 } } },
      other.token,
    );
    const refused = await send(`${t.url}/vault-inbound/${unsigned}/`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ number: card('4'), expiry: '01/30' }),
    });
    expect([refused.status, JSON.parse(refused.text).code]).toEqual([409, 'inbound-upstream-unsigned']);

    const plain = { headers: { 'content-type': 'text/plain' }, body: 'no card here' };
    expect((await send(`${t.url}/vault-inbound/${route}/`, plain)).status).toBe(200);
    expect((await send(`${t.url}/vault-inbound/${route}/`, plain)).status).toBe(200);
    const limited = await send(`${t.url}/vault-inbound/${route}/`, plain);
    expect([limited.status, JSON.parse(limited.text).code]).toEqual([429, 'inbound-rate-limited']);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('the upstream’s answer comes back masked, as every answer does', async () => {
    const route = await createRoute({
      caller_authentication: { kind: 'none', rate_limit: { requests: 5, per_seconds: 60 } },
    });
    const answer = await send(`${t.url}/vault-inbound/${route}/leak`, {
      headers: { 'content-type': 'text/plain' },
      body: 'hi',
    });
    expect(answer.status).toBe(200);
    expect(answer.text).not.toContain(leaked);
    expect(JSON.parse(answer.text).card).toBe(`${leaked.slice(0, 6)}******${leaked.slice(-4)}`);
  });

  it('all or nothing: a good card then a new one without an expiry stores neither, and nothing is sent', async () => {
    const secret = 'atomic-partner-secret-0123456789';
    const route = await createRoute({
      caller_authentication: { kind: 'shared-secret', header: 'x-partner-key', secret },
      field_mappings: { json: { expiration_date: '/cards/*/expiry', security_code: '/cards/*/cvv' } },
    });
    const [good, bad] = [card('4'), card('4')];
    const counts = async () => [await countRows('payment_methods'), await countRows('checkout_sessions')];
    const before = await counts();
    const received = upstream.received.length;
    const request = (second: Record<string, string>) =>
      send(`${t.url}/vault-inbound/${route}/`, {
        headers: { 'content-type': 'application/json', 'x-partner-key': secret },
        body: JSON.stringify({
          cards: [
            { number: good, expiry: '04/31', cvv: code('414') },
            { number: bad, cvv: code('424'), ...second },
          ],
        }),
      });
    const refused = await request({});
    expect([refused.status, JSON.parse(refused.text).code]).toEqual([422, 'inbound-card-data-unusable']);
    expect(await counts()).toEqual(before);
    expect(upstream.received.length).toBe(received);
    // The same request with the second card's expiry: both cards and both codes stored, and sent on.
    expect((await request({ expiry: '05/32' })).status).toBe(200);
    expect(await counts()).toEqual([before[0] + 2, before[1] + 2]);
    expect(upstream.received.length).toBe(received + 1);
  });

  it('the route’s upstream headers reach the upstream over the caller’s, and are never answered', async () => {
    const secret = 'headers-partner-secret-0123456789';
    const token = `Bearer vault-to-merchant-${randomUUID()}`;
    headerSecrets.push(token);
    const route = await createRoute({
      caller_authentication: { kind: 'shared-secret', header: 'x-partner-key', secret },
      upstream_headers: [
        { name: 'Authorization', value: token },
        { name: 'X-Merchant-Route', value: 'bookings' },
      ],
    });
    const answer = await send(`${t.url}/vault-inbound/${route}/`, {
      headers: {
        'content-type': 'text/plain',
        'x-partner-key': secret,
        authorization: 'Basic from-the-partner',
        'x-merchant-route': 'partner',
        'x-partner-trace': 'kept',
      },
      body: 'no card',
    });
    expect(answer.status).toBe(200);
    const reached = lastSigned();
    expect(reached.headers).toMatchObject({
      authorization: token,
      'x-merchant-route': 'bookings',
      'x-partner-trace': 'kept',
    });
    const read = await http(t.url, `/vault-forward/inbound-routes/${route}`, { token: merchant.token });
    expect(read.body.upstream_headers).toEqual([{ name: 'authorization' }, { name: 'x-merchant-route' }]);
    const listed = await http(t.url, '/vault-forward/inbound-routes?limit=100', { token: merchant.token });
    const records = await http(
      t.url,
      `/vault-forward/inbound-requests/${String(answer.headers['x-vault-inbound-request-id'])}`,
      {
        token: merchant.token,
      },
    );
    for (const text of [read.text, listed.text, records.text, answer.text]) expect(text).not.toContain(token);

    // A new caller secret seals the headers again with it: they still reach the upstream.
    const renewed = `${secret}-renewed`;
    const put = await http(t.url, `/vault-forward/inbound-routes/${route}`, {
      method: 'PUT',
      token: merchant.token,
      body: { caller_authentication: { kind: 'shared-secret', header: 'x-partner-key', secret: renewed } },
    });
    expect(put.text).not.toContain(token);
    const again = await send(`${t.url}/vault-inbound/${route}/`, {
      headers: { 'content-type': 'text/plain', 'x-partner-key': renewed },
      body: 'no card',
    });
    expect(again.status).toBe(200);
    expect(lastSigned().headers.authorization).toBe(token);
    headersRoute = { id: route, secret: renewed, token };
  });

  it('record_bodies: the record keeps the request as sent (ids, never the card) and the answer, sealed, until purged', async () => {
    const secret = 'bodies-partner-secret-0123456789';
    const routeWith = (record_bodies: boolean) =>
      createRoute({
        caller_authentication: { kind: 'shared-secret', header: 'x-partner-key', secret },
        field_mappings: { json: { expiration_date: '/card/expiry', security_code: '/card/cvv' } },
        ...(record_bodies ? { record_bodies, record_bodies_retention_days: 3 } : {}),
      });
    const post = async (route: string, marker: string) => {
      const number = card('4');
      const answer = await send(`${t.url}/vault-inbound/${route}/`, {
        headers: { 'content-type': 'application/json', 'x-partner-key': secret },
        body: JSON.stringify({ marker, card: { number, expiry: '06/31', cvv: code('616') } }),
      });
      expect(answer.status).toBe(200);
      const id = String(answer.headers['x-vault-inbound-request-id']);
      const detail = await http(t.url, `/vault-forward/inbound-requests/${id}`, { token: merchant.token });
      const [row] = await t.db.query(
        `SELECT ciphertext, wrapped_key, master_key_id, bodies_kept_until FROM inbound_requests WHERE id = $1`,
        [id],
      );
      return { number, sent: JSON.parse(lastSigned().body), detail: detail.body, row };
    };
    const [kept, notKept] = [`kept-${randomUUID()}`, `not-kept-${randomUUID()}`];

    const on = await post(await routeWith(true), kept);
    expect(on.detail).toMatchObject({
      outcome: 'sent',
      response_body: '{"ok":true}',
      request_body_truncated: false,
      response_body_truncated: false,
      bodies_kept_until: expect.any(String),
    });
    expect(on.detail.request_body).toContain(kept);
    expect(on.detail.request_body).toContain(`"number":"${on.sent.card.number}"`);
    expect(on.detail.request_body).not.toContain(on.number);
    expect(on.row.ciphertext).toBeInstanceOf(Buffer);

    const off = await post(await routeWith(false), notKept);
    expect(off.row).toEqual({ ciphertext: null, wrapped_key: null, master_key_id: null, bodies_kept_until: null });
    expect(off.detail).toMatchObject({ request_body: null, response_body: null, bodies_kept_until: null });

    // Sealed at rest: neither marker is in the database's dump, the kept one only in its record's ciphertext.
    const dump = dataDump(database.url);
    expect([dump.includes(kept), dump.includes(notKept), dump.includes(on.number)]).toEqual([false, false, false]);

    // Erased past the route's days; the record stays and says until when they were kept.
    const purge = t.get(InboundRequestBodyPurge);
    const DAY_MS = 86_400_000;
    expect(await purge.purgeExpired(new Date(Date.now() + DAY_MS))).toBe(0);
    expect(await purge.purgeExpired(new Date(Date.now() + 4 * DAY_MS))).toBeGreaterThanOrEqual(1);
    const purged = await http(t.url, `/vault-forward/inbound-requests/${on.detail.id}`, { token: merchant.token });
    expect(purged.body).toMatchObject({
      request_body: null,
      response_body: null,
      bodies_kept_until: on.detail.bodies_kept_until,
    });
  });

  // In a describe of its own: Jest runs a block's own tests before its nested blocks'.
  describe('afterwards', () => {
    it('no card number, code or upstream header value is in the log, the records or the database but its sealed rows', async () => {
      expect(cards.length).toBeGreaterThan(10);
      const records = JSON.stringify(await t.db.query(`SELECT * FROM inbound_requests`));
      const dump = dataDump(database.url);
      expect(dump).toContain('inbound_requests');
      // A code's digits may be a duration or a count among a log line's numbers by chance: its strings are searched.
      const logStrings = t.logs.lines.flatMap((line) => stringsOf(line)).join('\n');
      for (const [where, text, codeText] of [
        ['api log', t.logs.text, logStrings],
        ['records', records, records],
        ['pg_dump', dump, dump],
      ]) {
        for (const number of cards) expect({ where, holds: text.includes(number) }).toEqual({ where, holds: false });
        for (const digits of codes)
          expect({ where, digits, holds: holds(codeText, digits) }).toEqual({ where, digits, holds: false });
        for (const value of headerSecrets)
          expect({ where, holds: text.includes(value) }).toEqual({ where, holds: false });
      }
    });

    it('vault rotate-keys re-wraps caller secrets, upstream headers and kept bodies: they open with the new key alone', async () => {
      const marker = `kept-through-rotation-${randomUUID()}`;
      const recording = await createRoute({
        caller_authentication: { kind: 'none', rate_limit: { requests: 5, per_seconds: 60 } },
        record_bodies: true,
      });
      const recorded = await send(`${t.url}/vault-inbound/${recording}/`, {
        headers: { 'content-type': 'text/plain' },
        body: marker,
      });
      expect(recorded.status).toBe(200);
      const both = await startTestApp({
        env: { ...appEnv, VAULT_MASTER_KEYS: `${TEST_MASTER_KEY_2},${TEST_MASTER_KEY_1}` },
      });
      const rotated = await both.get(KeyRotationService).rotate();
      await both.close();
      expect(rotated).toMatchObject({ remaining: 0, failed_inbound_routes: [], failed_inbound_requests: [] });
      expect(rotated.rewrapped_inbound_routes).toBeGreaterThanOrEqual(1);
      expect(rotated.rewrapped_inbound_requests).toBeGreaterThanOrEqual(1);

      const onlyNew = await startTestApp({ env: { ...appEnv, VAULT_MASTER_KEYS: TEST_MASTER_KEY_2 } });
      try {
        const answer = await send(`${onlyNew.url}/vault-inbound/${headersRoute.id}/`, {
          headers: { 'content-type': 'text/plain', 'x-partner-key': headersRoute.secret },
          body: 'after the rotation',
        });
        expect(answer.status).toBe(200);
        expect(lastSigned().headers.authorization).toBe(headersRoute.token);
        const id = String(recorded.headers['x-vault-inbound-request-id']);
        const detail = await http(onlyNew.url, `/vault-forward/inbound-requests/${id}`, { token: merchant.token });
        expect(detail.body.request_body).toBe(marker);
      } finally {
        await onlyNew.close();
      }
      for (const logs of [both.logs.text, onlyNew.logs.text])
        for (const value of headerSecrets) expect(logs.includes(value)).toBe(false);
    });
  });
});
