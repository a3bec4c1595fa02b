import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiKey } from '../factories/api-keys';
import { createBuyer } from '../factories/buyers';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import {
  closedPort,
  Downstream,
  selfSignedCertificate,
  startHttp2CapableDownstream,
  startHttpDownstream,
  startHttpsDownstream,
  streamed,
} from '../support/downstream';
import { checkedFetch } from '../support/checked-clients';
import { expectProblem, http, HttpResult } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { testTempDir } from '../support/temp-data-dir';

describe('POST /vault-forward against real downstream servers', () => {
  let t: TestApp;
  let plain: Downstream;
  let tls: Downstream;
  let untrusted: Downstream;
  let refusedPort: number;
  let h2: { url: string; close(): Promise<void> };
  let merchant: string;
  let token: string;
  let card: { id: string; number: string };
  let namedCard: { id: string; number: string };
  let foreignCard: string;
  let caFile: string;
  const cardNumbers: string[] = [];

  beforeAll(async () => {
    const trustedCert = await selfSignedCertificate();
    caFile = join(testTempDir('vf-ca-'), 'ca.pem');
    writeFileSync(caFile, trustedCert.cert);
    [plain, tls, untrusted, refusedPort, h2] = await Promise.all([
      startHttpDownstream(),
      startHttpsDownstream(trustedCert),
      startHttpsDownstream(await selfSignedCertificate()),
      closedPort(),
      startHttp2CapableDownstream(trustedCert),
    ]);
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1', FORWARD_EXTRA_CA_FILE: caFile } });
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: {
        display_name: 'Test downstreams',
        hosts: [plain.port, tls.port, untrusted.port, refusedPort]
          .map((p) => `127.0.0.1:${p}`)
          .concat(`localhost:${tls.port}`, new URL(h2.url).host),
        methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      },
    });
    expect(config.status).toBe(201);
    const n1 = cardNumber('4', 16);
    const n2 = cardNumber('55', 16);
    card = { id: (await createCard(t, merchant, { number: n1, expiration_date: '04/31' })).id, number: n1 };
    namedCard = {
      id: (
        await createCard(t, merchant, {
          number: n2,
          expiration_date: '12/29',
          cardholder_name: 'Zoë "Q" O\'Neil \\ </x>',
        })
      ).id,
      number: n2,
    };
    const n3 = cardNumber('4', 16);
    foreignCard = (await createCard(t, (await createMerchantAccount(t)).id, { number: n3 })).id;
    cardNumbers.push(n1, n2, n3);
  });

  afterAll(async () => {
    await t.close();
    await Promise.all([plain.close(), tls.close(), untrusted.close(), h2.close()]);
  });

  function forward(options: {
    url: string;
    method?: string;
    paymentMethods?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    contentType?: string;
  }) {
    const headers: Record<string, string> = {
      'x-vault-forward-url': options.url,
      'x-vault-forward-http-method': options.method ?? 'POST',
      ...(options.paymentMethods ? { 'x-vault-forward-payment-methods': options.paymentMethods } : {}),
      ...(options.body !== undefined ? { 'content-type': options.contentType ?? 'application/json' } : {}),
      ...options.headers,
    };
    return http(t.url, '/vault-forward', { method: 'POST', token, headers, rawBody: options.body });
  }

  function expectOurs(result: HttpResult, status: number, code: string) {
    const problem = expectProblem(result, status, code);
    expect(result.headers.get('x-vault-forward-error')).toBe('true');
    return problem;
  }

  const spec = JSON.stringify({
    cards: [{ number: '{{ CARD_NUMBER_1 }}', expiry: '{{ CARD_EXPIRATION_DATE_1 }}', cvv: '123' }],
  });

  it('sends the spec’s example (PUT, cards array, literal cvv, pass-through bearer) with real card values', async () => {
    const before = plain.received.length;
    const result = await forward({
      url: `${plain.url}/v1/tokens?x=1`,
      method: 'PUT',
      paymentMethods: card.id,
      headers: { 'x-vault-forward-header-authorization': 'Bearer downstream-access-token' },
      body: spec,
    });
    expect(result.status).toBe(200);
    expect(result.headers.get('x-vault-forward-request-id')).toBe(result.headers.get('x-request-id'));
    // A caller-chosen x-request-id is kept for tracing, but the forward gets its own unique id.
    const traced = await forward({
      url: `${plain.url}/echo`,
      body: '{}',
      headers: { 'x-request-id': 'trace-0123456789' },
    });
    expect(traced.headers.get('x-request-id')).toBe('trace-0123456789');
    expect(traced.headers.get('x-vault-forward-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    plain.received.pop();
    expect(result.headers.get('x-vault-forward-error')).toBeNull();
    expect(result.headers.get('x-downstream')).toBe('yes');
    expect(result.headers.get('set-cookie')).toBeNull();
    expect(result.headers.get('keep-alive')).not.toBe('timeout=5'); // the downstream's hop-by-hop header stays there

    const got = plain.received[before];
    expect(got.method).toBe('PUT');
    expect(got.url).toBe('/v1/tokens?x=1');
    expect(JSON.parse(got.body.toString())).toEqual({ cards: [{ number: card.number, expiry: '04/31', cvv: '123' }] });
    expect(got.headers.authorization).toBe('Bearer downstream-access-token');
    expect(got.headers.host).toBe(`127.0.0.1:${plain.port}`);
    expect(got.headers['content-length']).toBe(String(got.body.length));
    for (const name of Object.keys(got.headers)) expect(name).not.toMatch(/^x-vault-forward|^x-merchant|^x-request-id/);
    expect(JSON.stringify(got.headers)).not.toContain(token);
  });

  it('fills every placeholder form, JSON-escapes into JSON, keeps the rest byte for byte', async () => {
    const before = plain.received.length;
    const body =
      '{"a":"{{CARD_NUMBER_2}}","m":"{{ CARD_EXPIRATION_DATE_M_2 }}",' +
      '"mm":"{{ CARD_EXPIRATION_DATE_MM_1 }}","yy":"{{ CARD_EXPIRATION_DATE_YY_2 }}",' +
      '"yyyy":"{{ CARD_EXPIRATION_DATE_YYYY_1 }}","name":"{{ CARDHOLDER_NAME_2 }}",' +
      '"empty":"{{ CARDHOLDER_NAME_1 }}","literal":"\\\\{{ CARD_NUMBER_1 }}",  "other":{"x":[1, 2.50,"ü"]}}';
    const result = await forward({ url: `${plain.url}/echo`, paymentMethods: `${card.id},${namedCard.id}`, body });
    expect(result.status).toBe(200);
    const sent = plain.received[before].body.toString('utf8');
    expect(JSON.parse(sent)).toEqual({
      a: namedCard.number,
      m: '12',
      mm: '04',
      yy: '29',
      yyyy: '2031',
      name: 'Zoë "Q" O\'Neil \\ </x>',
      empty: '',
      literal: '{{ CARD_NUMBER_1 }}',
      other: { x: [1, 2.5, 'ü'] },
    });
    expect(sent).toContain(',  "other":{"x":[1, 2.50,"ü"]}}'); // untouched bytes stay as they were
  });

  it('inserts raw into non-JSON bodies and into forwarded header values', async () => {
    const before = plain.received.length;
    await forward({
      url: `${plain.url}/form`,
      paymentMethods: card.id,
      contentType: 'application/x-www-form-urlencoded',
      body: 'pan={{ CARD_NUMBER_1 }}&exp={{CARD_EXPIRATION_DATE_MM_1}}{{CARD_EXPIRATION_DATE_YY_1}}',
      headers: { 'x-vault-forward-header-x-card-last-digits': 'pan {{ CARD_NUMBER_1 }}' },
    });
    const got = plain.received[before];
    expect(got.body.toString()).toBe(`pan=${card.number}&exp=0431`);
    expect(got.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(got.headers['x-card-last-digits']).toBe(`pan ${card.number}`);
  });

  it('forwards over HTTPS to a trusted certificate', async () => {
    const before = tls.received.length;
    const result = await forward({ url: `${tls.url}/secure`, paymentMethods: card.id, body: spec });
    expect(result.status).toBe(200);
    expect(JSON.parse(tls.received[before].body.toString()).cards[0].number).toBe(card.number);
  });

  it('passes a downstream 500 through as the downstream’s own answer', async () => {
    const result = await forward({ url: `${plain.url}/status/500`, body: '{}' });
    expect(result.status).toBe(500);
    expect(result.headers.get('x-vault-forward-error')).toBeNull();
    expect(result.headers.get('content-type')).toBe('application/json');
    expect(result.body).toEqual({ error: 'downstream says no' });
  });

  it('a target cannot pass its answer off as ours: its x-vault-forward-* headers are dropped, our ids win', async () => {
    const result = await forward({ url: `${plain.url}/spoof`, body: '{}' });
    expect(result.status).toBe(200);
    expect(result.headers.get('x-vault-forward-error')).toBeNull();
    expect(result.headers.get('x-vault-forward-request-id')).not.toBe('spoofed');
    expect(result.headers.get('x-request-id')).not.toBe('spoofed');
    expect(result.headers.get('x-request-id')).toBe(result.headers.get('x-vault-forward-request-id'));
  });

  it('does not follow redirects', async () => {
    const result = await forward({ url: `${plain.url}/redirect`, method: 'GET' });
    expect(result.status).toBe(302);
    expect(result.headers.get('location')).toBe('/echo');
  });

  it('answers HEAD and GET without a body', async () => {
    expect((await forward({ url: `${plain.url}/echo`, method: 'GET' })).body.method).toBe('GET');
    expect((await forward({ url: `${plain.url}/echo`, method: 'HEAD' })).status).toBe(200);
    // A HEAD answer's length describes the GET body, which is not there: no 10 MiB refusal for it.
    const head = await forward({ url: `${plain.url}/big`, method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-vault-forward-error')).toBeNull();
  });

  describe('errors of the service itself (problem+json with x-vault-forward-error: true, nothing sent)', () => {
    let before: number;
    beforeEach(() => {
      before = plain.received.length;
    });
    afterEach(() => {
      expect(plain.received.length).toBe(before);
    });

    it.each([
      [{ 'x-vault-forward-url': '' }, 'x-vault-forward-url'],
      [{ 'x-vault-forward-url': '/relative/path' }, 'x-vault-forward-url'],
      [{ 'x-vault-forward-url': 'ftp://127.0.0.1/x' }, 'x-vault-forward-url'],
      [{ 'x-vault-forward-url': 'https://user:pw@api.example/x' }, 'x-vault-forward-url'],
      [{ 'x-vault-forward-http-method': '' }, 'x-vault-forward-http-method'],
      [{ 'x-vault-forward-http-method': 'TRACE' }, 'x-vault-forward-http-method'],
      [{ 'x-vault-forward-timeout': '0' }, 'x-vault-forward-timeout'],
      [{ 'x-vault-forward-timeout': '121' }, 'x-vault-forward-timeout'],
      [{ 'x-vault-forward-timeout': '1.5' }, 'x-vault-forward-timeout'],
      [{ 'x-vault-forward-authentications': 'not-a-uuid' }, 'x-vault-forward-authentications'],
      [{ 'x-vault-forward-header-connection': 'close' }, 'x-vault-forward-header-connection'],
      [{ 'x-vault-forward-header-host': 'evil.example' }, 'x-vault-forward-header-host'],
    ])('bad header %p → 400 naming it', async (override, name) => {
      const headers: Record<string, string> = {
        'x-vault-forward-url': `${plain.url}/echo`,
        'x-vault-forward-http-method': 'POST',
        ...override,
      };
      for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
      const result = await http(t.url, '/vault-forward', { method: 'POST', token, headers, rawBody: '{}' });
      const problem = expectOurs(result, 400, 'invalid-forward-header');
      expect(problem.errors[0]).toMatchObject({ location: 'header', name });
    });

    it.each([
      ['not-a-uuid', 'invalid-payment-methods-header'],
      ['', 'invalid-payment-methods-header'],
    ])('x-vault-forward-payment-methods %p → 400', async (value, code) => {
      const result = await http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          'x-vault-forward-url': `${plain.url}/echo`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': value,
        },
        rawBody: '{}',
      });
      expectOurs(result, 400, code);
    });

    it('a misspelled header (the spec’s own x-valud-… typo) → 400 naming it and what it meant', async () => {
      const result = await forward({
        url: `${plain.url}/echo`,
        body: '{}',
        headers: { 'x-valud-forward-authentications': '3f1c1c1e-4d0e-4c1e-9f3b-8f2f8f0a3c11' },
      });
      const problem = expectOurs(result, 400, 'unknown-forward-header');
      expect(problem.detail).toContain('x-vault-forward-authentications');
      expect(problem.errors[0]).toMatchObject({ location: 'header', name: 'x-valud-forward-authentications' });
      const other = await forward({
        url: `${plain.url}/echo`,
        body: '{}',
        headers: { 'x-vault-forward-authorization': 'Bearer x' },
      });
      expect(expectOurs(other, 400, 'unknown-forward-header').detail).toContain('x-vault-forward-header-authorization');
    });

    it('a repeated forwarding header → 400 (two targets or two credentials are ambiguous)', async () => {
      const { request } = await import('node:http');
      const status = await new Promise<{ status: number; body: string; ours: string | undefined }>(
        (resolve, reject) => {
          const req = request(`${t.url}/vault-forward`, { method: 'POST' });
          for (const [k, v] of [
            ['authorization', `Bearer ${token}`],
            ['content-type', 'application/json'],
            ['x-vault-forward-url', `${plain.url}/echo`],
            ['x-vault-forward-url', 'https://elsewhere.example/'],
            ['x-vault-forward-http-method', 'POST'],
          ])
            req.appendHeader(k, v);
          req.on('response', (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () =>
              resolve({
                status: res.statusCode!,
                body,
                ours: res.headers['x-vault-forward-error'] as string | undefined,
              }),
            );
          });
          req.on('error', reject);
          req.end('{}');
        },
      );
      expect(status.status).toBe(400);
      expect(status.ours).toBe('true');
      expect(JSON.parse(status.body)).toMatchObject({
        code: 'invalid-forward-header',
        errors: [{ location: 'header', name: 'x-vault-forward-url' }],
      });
    });

    it('a bad placeholder in a forwarded header is located in that header', async () => {
      const problem = expectOurs(
        await forward({
          url: `${plain.url}/echo`,
          paymentMethods: card.id,
          body: '{}',
          headers: { 'x-vault-forward-header-x-card': '{{ CARD_NUMBER_9 }}' },
        }),
        400,
        'invalid-placeholder',
      );
      expect(problem.errors[0]).toMatchObject({ location: 'header', name: 'x-vault-forward-header-x-card' });
    });

    it('an unknown auth method → 422 naming it, nothing sent (forward-authentication-methods.e2e-spec.ts has the rest)', async () => {
      const before = plain.received.length;
      const result = await forward({
        url: `${plain.url}/echo`,
        body: '{}',
        headers: { 'x-vault-forward-authentications': '3f1c1c1e-4d0e-4c1e-9f3b-8f2f8f0a3c11' },
      });
      expect(expectOurs(result, 422, 'authentication-method-not-usable').errors[0].message).toContain(
        '3f1c1c1e-4d0e-4c1e-9f3b-8f2f8f0a3c11',
      );
      expect(plain.received.length).toBe(before);
    });

    it.each([
      ['{"n":"{{ CARD_NUMBR_1 }}"}', 'CARD_NUMBR_1'],
      ['{"n":"{{ CARD_NUMBER_2 }}"}', 'CARD_NUMBER_2'],
    ])('placeholder %s → 400 naming it', async (body, token_) => {
      const problem = expectOurs(
        await forward({ url: `${plain.url}/echo`, paymentMethods: card.id, body }),
        400,
        'invalid-placeholder',
      );
      expect(problem.detail).toContain(token_);
    });

    it('another merchant’s payment method → 400 naming the position', async () => {
      const problem = expectOurs(
        await forward({ url: `${plain.url}/echo`, paymentMethods: `${card.id},${foreignCard}`, body: spec }),
        400,
        'unknown-payment-method',
      );
      expect(problem.detail).toContain('position 2');
    });

    it('a target no enabled config lists → 403 endpoint-not-enabled', async () => {
      expectOurs(await forward({ url: 'https://api.not-enabled.example/x', body: '{}' }), 403, 'endpoint-not-enabled');
      const port = await closedPort();
      expectOurs(await forward({ url: `http://127.0.0.1:${port}/x`, body: '{}' }), 403, 'endpoint-not-enabled');
    });

    it('a disabled config no longer enables its hosts', async () => {
      const created = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Off', hosts: ['api.off.example'] },
      });
      expect(
        (await forward({ url: 'https://api.off.example/x', body: '{}', headers: { 'x-vault-forward-timeout': '1' } }))
          .body.code,
      ).not.toBe('endpoint-not-enabled');
      await http(t.url, `/vault-forward/configs/${created.body.id}`, {
        method: 'PUT',
        token,
        body: { enabled: false },
      });
      expectOurs(await forward({ url: 'https://api.off.example/x', body: '{}' }), 403, 'endpoint-not-enabled');
    });

    it('plain http to a host the operator did not list → 400 insecure-target', async () => {
      await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Plain', hosts: ['api.plain.example:80'] },
      });
      expectOurs(await forward({ url: 'http://api.plain.example/x', body: '{}' }), 400, 'insecure-target');
    });

    it.each([
      'https://2130706434/',
      'https://0x7f000002/',
      'https://127.0.0.2/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.2]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      // IPv6 outside global unicast: IPv4-compatible forms of 169.254.169.254, 127.0.0.1 and 10.0.0.1,
      // ::2 and 4000::1 are refused before any connection, as the checked problem field shows.
      'https://[::a9fe:a9fe]/latest/meta-data/',
      'https://[::7f00:1]/',
      'https://[::a00:1]/',
      'https://[::2]/',
      'https://[4000::1]/',
    ])('%s is refused (403) even when a config lists it', async (url) => {
      // The API refuses to save such a host, so the config goes in by SQL (as one saved before that
      // check existed would be), for a merchant account of its own: no process has its configs
      // cached yet, so this very config is the one consulted, as the forward to the other host
      // it lists shows.
      const own = (await createMerchantAccount(t)).id;
      const ownToken = await (await createApiKey(t, own)).token();
      const host = new URL(url).hostname;
      const sneaky = randomUUID();
      await t.db.query(
        `INSERT INTO vault_forward_configs (id, definition_id, merchant_account_id, display_name, hosts, methods)
         VALUES ($1, $2, $3, 'sneaky', $4, '{POST}')`,
        [sneaky, `custom-${sneaky}`, own, [host, `127.0.0.1:${plain.port}`]],
      );
      const send = (target: string) =>
        http(t.url, '/vault-forward', {
          method: 'POST',
          token: ownToken,
          headers: {
            'x-vault-forward-url': target,
            'x-vault-forward-http-method': 'POST',
            // Were the address let through, an unreachable one ends in 502 or this timeout, not 403.
            'x-vault-forward-timeout': '2',
            'content-type': 'application/json',
          },
          rawBody: '{}',
        });
      expect((await send(`${plain.url}/listed`)).status).toBe(200);
      plain.received.pop();
      const problem = expectOurs(await send(url), 403, 'target-address-forbidden');
      expect(problem.errors[0]).toMatchObject({ location: 'header', name: 'x-vault-forward-url' });
    });

    it('speaks HTTP/1.1 to an HTTPS target that offers HTTP/2 (undici 8 would negotiate HTTP/2 by default)', async () => {
      const result = await forward({ url: `${h2.url}/x`, body: '{}' });
      expect(result.status).toBe(200);
      expect(JSON.parse(result.text)).toEqual({ httpVersion: '1.1' });
    });

    it('a name that resolves to loopback (localhost) is refused at connect time', async () => {
      expectOurs(
        await forward({ url: `https://localhost:${tls.port}/x`, body: '{}' }),
        403,
        'target-address-forbidden',
      );
    });

    it.each([
      ['169.254.169.254', 'link-local'],
      ['[::a9fe:a9fe]', 'IPv4-compatible'],
      ['[::7f00:1]:8443', 'IPv4-compatible'],
      ['[::a00:1]', 'IPv4-compatible'],
      ['[::2]', 'IPv4-compatible'],
      ['[4000::1]', 'reserved'],
      ['https://[2001:db8::1]', 'documentation'],
    ])('configs refuse the non-public IP literal %s when created or updated (%s)', async (host, reason) => {
      const refused = (result: HttpResult) =>
        expect(expectProblem(result, 400, 'validation-failed').errors).toEqual([
          { location: 'body', name: 'hosts[1]', message: `${reason} addresses are not allowed` },
        ]);
      const hosts = ['api.public.example', host];
      refused(
        await http(t.url, '/vault-forward/configs', { method: 'POST', token, body: { display_name: 'Meta', hosts } }),
      );
      const saved = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Meta', hosts: ['api.public.example'] },
      });
      expect(saved.status).toBe(201);
      try {
        refused(
          await http(t.url, `/vault-forward/configs/${saved.body.id}`, { method: 'PUT', token, body: { hosts } }),
        );
        const kept = await http(t.url, `/vault-forward/configs/${saved.body.id}`, { token });
        expect(kept.body.hosts).toEqual(['api.public.example']);
      } finally {
        await http(t.url, `/vault-forward/configs/${saved.body.id}`, { method: 'DELETE', token });
      }
    });

    it('connection refused → 502 downstream-unreachable', async () => {
      expectOurs(
        await forward({ url: `http://127.0.0.1:${refusedPort}/x`, body: '{}' }),
        502,
        'downstream-unreachable',
      );
    });

    it('an untrusted TLS certificate → 502 downstream-unreachable', async () => {
      const problem = expectOurs(
        await forward({ url: `${untrusted.url}/x`, body: '{}' }),
        502,
        'downstream-unreachable',
      );
      expect(problem.detail).toMatch(/TLS/);
    });

    it('a slow downstream → 504 downstream-timeout after x-vault-forward-timeout', async () => {
      const result = await forward({
        url: `${plain.url}/slow`,
        body: '{}',
        headers: { 'x-vault-forward-timeout': '1' },
      });
      expectOurs(result, 504, 'downstream-timeout');
      plain.received.pop(); // it did arrive; it just did not answer in time
    });

    it('a downstream body declared over 10 MiB → 502 downstream-response-too-large', async () => {
      expectOurs(await forward({ url: `${plain.url}/big`, method: 'GET' }), 502, 'downstream-response-too-large');
      plain.received.pop();
    });

    it('a 2 MiB request body → 413', async () => {
      expectOurs(
        await forward({
          url: `${plain.url}/echo`,
          body: Buffer.alloc(2 * 1024 * 1024, 0x41),
          contentType: 'application/octet-stream',
        }),
        413,
        'payload-too-large',
      );
    });

    it('no token → 401, still marked as ours', async () => {
      const result = await http(t.url, '/vault-forward', {
        method: 'POST',
        headers: { 'x-vault-forward-url': `${plain.url}/echo`, 'x-vault-forward-http-method': 'POST' },
      });
      expectOurs(result, 401, 'unauthorized');
    });
  });

  describe('cards are read from a per-process cache of sealed rows, forgotten on delete', () => {
    const use = (app: TestApp, id: string) =>
      http(app.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          'x-vault-forward-url': `${plain.url}/echo`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': id,
          'content-type': 'application/json',
        },
        rawBody: spec,
      });
    const sentNumber = () => JSON.parse(plain.received.at(-1)!.body.toString()).cards[0].number;

    it('a deleted card cannot be forwarded any more, at once', async () => {
      const number = cardNumber('4', 16);
      cardNumbers.push(number);
      const doomed = await createCard(t, merchant, { number });
      expect((await use(t, doomed.id)).status).toBe(200);
      expect(sentNumber()).toBe(number);
      expect((await http(t.url, `/payment-methods/${doomed.id}`, { method: 'DELETE', token })).status).toBe(204);
      expectOurs(await use(t, doomed.id), 400, 'unknown-payment-method');
    });

    it('deleting a buyer forgets its cards too', async () => {
      const number = cardNumber('4', 16);
      cardNumbers.push(number);
      const buyer = await createBuyer(t, merchant);
      const owned = await createCard(t, merchant, { number, buyer_id: buyer.id });
      expect((await use(t, owned.id)).status).toBe(200);
      expect((await http(t.url, `/buyers/${buyer.id}`, { method: 'DELETE', token })).status).toBe(204);
      expectOurs(await use(t, owned.id), 400, 'unknown-payment-method');
    });

    it('a delete through one API process reaches the cache of another (shared Redis)', async () => {
      const second = await startTestApp({
        env: { FORWARD_INSECURE_HOSTS: '127.0.0.1', FORWARD_EXTRA_CA_FILE: caFile },
      });
      try {
        const number = cardNumber('4', 16);
        cardNumbers.push(number);
        const doomed = await createCard(t, merchant, { number });
        // The second process reads the card, and keeps it for up to a minute…
        expect((await use(second, doomed.id)).status).toBe(200);
        expect((await use(second, doomed.id)).status).toBe(200);
        // …until the first deletes it.
        expect((await http(t.url, `/payment-methods/${doomed.id}`, { method: 'DELETE', token })).status).toBe(204);
        await waitFor(async () => (await use(second, doomed.id)).status === 400, {
          what: 'the second process to forget the card',
        });
      } finally {
        await second.close();
      }
    });
  });

  it('decrypts a card only when its number or holder name is used', async () => {
    const damaged = await createCard(t, merchant, { number: cardNumber('4', 16), expiration_date: '07/33' });
    // A ciphertext that no longer authenticates: any attempt to decrypt it fails.
    await t.db.query(
      `UPDATE payment_methods SET ciphertext = set_byte(ciphertext, 20, (get_byte(ciphertext, 20) + 1) % 256) WHERE id = $1`,
      [damaged.id],
    );
    const expiryOnly = await forward({
      url: `${plain.url}/echo`,
      paymentMethods: damaged.id,
      body: '{"exp":"{{ CARD_EXPIRATION_DATE_MM_1 }}/{{ CARD_EXPIRATION_DATE_YYYY_1 }}"}',
    });
    expect(expiryOnly.status).toBe(200);
    expect(JSON.parse(plain.received.at(-1)!.body.toString())).toEqual({ exp: '07/2033' });
    expectOurs(
      await forward({ url: `${plain.url}/echo`, paymentMethods: damaged.id, body: '{"n":"{{ CARD_NUMBER_1 }}"}' }),
      503,
      'vault-master-key-mismatch',
    );
  });

  describe('answers stream back', () => {
    async function rawForward(path: string): Promise<Response> {
      return checkedFetch(t.url, '/vault-forward', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'x-vault-forward-url': `${plain.url}${path}`,
          'x-vault-forward-http-method': 'GET',
        },
      });
    }

    it('the first bytes reach the caller before the downstream has finished', async () => {
      const response = await rawForward('/stream');
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(Buffer.from(first.value).toString()).toBe('first\n');
      expect(streamed.ended).toBe(false);
      let rest = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
        rest += Buffer.from(chunk.value).toString();
      expect(rest).toBe('second\n');
      expect(streamed.ended).toBe(true);
      plain.received.pop();
    });

    it('a caller that leaves mid-answer is recorded as such, and the target connection is let go', async () => {
      const controller = new AbortController();
      const response = await checkedFetch(t.url, '/vault-forward', {
        method: 'POST',
        signal: controller.signal,
        headers: {
          authorization: `Bearer ${token}`,
          'x-vault-forward-url': `${plain.url}/stream`,
          'x-vault-forward-http-method': 'GET',
        },
      });
      const id = response.headers.get('x-vault-forward-request-id');
      await response.body!.getReader().read();
      controller.abort();
      const record = await waitFor(
        async () => {
          const found = await http(t.url, `/vault-forward/requests/${id}`, { token });
          return found.status === 200 && found;
        },
        { what: 'the forward record' },
      );
      expect(record.body).toMatchObject({ status: 200, error_type: 'client-disconnected' });
      plain.received.pop();
    });

    it('an undeclared body over 10 MiB is cut off at the limit, and its record says why', async () => {
      const response = await rawForward('/big-chunked');
      expect(response.status).toBe(200);
      const id = response.headers.get('x-vault-forward-request-id');
      let size = 0;
      await expect(
        (async () => {
          for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) size += chunk.length;
        })(),
      ).rejects.toThrow();
      expect(size).toBeLessThanOrEqual(10 * 1024 * 1024);
      const record = await waitFor(
        async () => {
          const found = await http(t.url, `/vault-forward/requests/${id}`, { token });
          return found.status === 200 && found;
        },
        { what: 'the forward record' },
      );
      expect(record.body).toMatchObject({ status: 200, error_type: 'downstream-response-too-large' });
      plain.received.pop();
    });
  });

  it('records every forward, with no credential, query or card number even in the bodies it keeps (decision 0104)', async () => {
    const ok = await forward({
      url: `${plain.url}/echo?secret=query`,
      method: 'PUT',
      paymentMethods: card.id,
      body: spec,
      headers: { 'x-vault-forward-header-authorization': 'Bearer record-me-not' },
    });
    const failed = await forward({ url: `http://127.0.0.1:${refusedPort}/x`, body: '{}' });
    const recorded = (id: string | null) =>
      waitFor(
        async () => {
          const found = await http(t.url, `/vault-forward/requests/${id}`, { token });
          // A forward with cards is on record (status null) before it is sent; its outcome follows in a batch.
          return found.status === 200 && found.body.status !== null && found;
        },
        { what: `the outcome of forward ${id}` },
      );
    const one = await recorded(ok.headers.get('x-vault-forward-request-id'));
    expect(one.body).toMatchObject({
      type: 'vault-forward-request',
      method: 'PUT',
      target_url: `${plain.url}/echo`,
      status: 200,
      payment_method_ids: [card.id],
      authentication_ids: [],
      error_type: null,
      config_id: expect.any(String),
    });
    expect(one.body.duration_ms).toBeGreaterThan(0);
    const bad = await recorded(failed.headers.get('x-request-id'));
    expect(bad.body).toMatchObject({ status: 502, error_type: 'downstream-unreachable' });
    const list = await http(t.url, '/vault-forward/requests?limit=100', { token });
    expect(list.body.items.length).toBeGreaterThan(10);
    const rows = await t.db.query(
      `SELECT row_to_json(r)::text AS row FROM vault_forward_requests r WHERE merchant_account_id = $1`,
      [merchant],
    );
    const text = rows.map((r: { row: string }) => r.row).join('\n');
    expect(text).not.toContain('record-me-not');
    expect(text).not.toContain('secret=query');
    for (const number of cardNumbers) expect(text).not.toContain(number);
  });

  it('logs one request line per forward, like every other route’s, with credentials redacted', async () => {
    const requestId = `fwd-log-${randomUUID()}`;
    const result = await forward({
      url: `${plain.url}/echo`,
      body: '{}',
      headers: { 'x-request-id': requestId, 'x-vault-forward-header-authorization': 'Bearer log-me-not' },
    });
    expect(result.status).toBe(200);
    expect(result.headers.get('x-request-id')).toBe(requestId);
    const line = await waitFor(() => t.logs.requestLine(requestId), { what: 'the forward’s request line' });
    expect(line).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { method: 'POST', url: '/vault-forward' },
      res: { statusCode: 200 },
    });
    expect(line.req.headers.authorization).toBe('[Redacted]');
    expect(line.req.headers['x-vault-forward-header-authorization']).toBe('[Redacted]');
    expect(line.res.headers['x-vault-forward-request-id']).toBe(result.headers.get('x-vault-forward-request-id'));
    expect(t.logs.text).not.toContain('log-me-not');
    const refused = await http(t.url, '/vault-forward', {
      method: 'POST',
      headers: { 'x-request-id': `${requestId}-401` },
    });
    expect(refused.status).toBe(401);
    expect(
      await waitFor(() => t.logs.requestLine(`${requestId}-401`), { what: 'the 401’s request line' }),
    ).toMatchObject({ level: 40, res: { statusCode: 401 } });
  });

  it('wrote no card number and no forwarded credential into any log line of the whole run', async () => {
    // Absence proves something only once the lines of every earlier request are in: lines are
    // written in order, so wait for the line of one last request.
    const marker = `fwd-last-${randomUUID()}`;
    await forward({ url: `${plain.url}/echo`, body: '{}', headers: { 'x-request-id': marker } });
    await waitFor(() => t.logs.requestLine(marker), { what: 'the last request’s line' });
    const logs = t.logs.text;
    expect(logs.length).toBeGreaterThan(1000);
    for (const number of cardNumbers) {
      expect(logs).not.toContain(number);
      expect(logs).not.toContain(number.slice(-12));
    }
    expect(logs).not.toContain('downstream-access-token');
    expect(logs).not.toContain('record-me-not');
    expect(logs).not.toContain("O'Neil");
  });
});
