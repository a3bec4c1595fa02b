import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { createApiKey } from '../factories/api-keys';
import { cardNumber } from '../factories/cards';
import { createCheckoutSession } from '../factories/checkout-sessions';
import { createMerchantWithConfig, MerchantWithToken } from '../factories/forwarding-merchants';
import { MerchantAccountsService } from '../../src/modules/merchants/accounts/merchant-accounts.service';
import { CheckoutSessionsRepository } from '../../src/modules/payments/checkout-sessions/checkout-sessions.repository';
import { Metrics } from '../../src/platform/metrics/metrics.service';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http } from '../support/http';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { dataDump, logStrings, stringsOf } from '../support/sink-texts';
import { startEntryPoint } from '../support/entry-point';
import { startOtlpReceiver } from '../support/otlp-receiver';
import { entryPointEnv, startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/** The development default: secure-fields.localhost on the port the API listens on. */
const SECURE_FIELDS_HOST = 'secure-fields.localhost';

const SHOP = 'http://shop.localhost:8123';
const OTHER_SHOP = 'https://other-shop.example';

const csp = (parent: string) =>
  "default-src 'self'; script-src 'self'; style-src 'self'; font-src 'self' https://fonts.gstatic.com; " +
  `connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors ${parent}`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/**
 * The server side of Secure Fields (decision 0140), over plain HTTP with the Host header of the secure-fields origin:
 * the frame pages and their headers, the hashed assets, the tokenless card submission (listed origin, live session,
 * ten tries counted in PostgreSQL across two API processes), and nothing else on that host.
 */
describe('Secure Fields: the server on its own origin', () => {
  let database: IsolatedDatabase;
  let t: TestApp;
  let second: TestApp;
  let downstream: Downstream;
  let shop: MerchantWithToken;
  /** Card numbers and codes used: none may be in a log line or in the database's dump. */
  const secrets: string[] = [];

  beforeAll(async () => {
    database = await createIsolatedDatabase('secure_fields_server');
    const env = { DATABASE_URL: database.url, FORWARD_INSECURE_HOSTS: '127.0.0.1' };
    downstream = await startHttpDownstream();
    t = await startTestApp({ env });
    second = await startTestApp({ env });
    shop = await createMerchantWithConfig(t, downstream.port, 'Secure Fields shop');
    await t.get(MerchantAccountsService).update(shop.id, { secureFieldsOrigins: [`${SHOP}/`] });
  }, 90_000);

  afterAll(async () => {
    await second?.close();
    await t?.close();
    await downstream?.close();
    await database?.drop();
  }, 30_000);

  /** A request to the secure-fields origin of `app` (its Host header), as a browser's frame makes it. */
  async function sf(
    app: TestApp,
    path: string,
    init: { method?: 'GET' | 'PUT' | 'POST'; headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<Answer> {
    const { port } = new URL(app.url);
    const response = await request(`${app.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        host: `${SECURE_FIELDS_HOST}:${port}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await response.body.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* html or empty */
    }
    return { status: response.statusCode, headers: response.headers, text, body };
  }

  function card() {
    const number = cardNumber('4', 16);
    const security_code = String(100 + Math.floor(Math.random() * 900));
    secrets.push(number, number.slice(-12));
    return { number, expiration_date: '07/31', security_code };
  }

  const submit = (app: TestApp, sessionId: string, origin: string | null, fields: object) =>
    sf(app, `/checkout/sessions/${sessionId}/fields`, {
      method: 'PUT',
      headers: origin === null ? {} : { 'x-secure-fields-parent-origin': origin },
      body: { payment_method: fields },
    });

  function expectSfProblem(answer: Answer, status: number, code: string): void {
    expect({ status: answer.status, code: answer.body?.code }).toEqual({ status, code });
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  }

  it('serves the frames with the exact policy for a listed parent origin, and a 403 page without input otherwise', async () => {
    for (const page of ['/controller.html', '/input.html']) {
      const listed = await sf(t, `${page}?parentOrigin=${encodeURIComponent(SHOP)}&type=number`);
      expect(listed.status).toBe(200);
      expect(listed.headers).toMatchObject({
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': csp(SHOP),
        'referrer-policy': 'no-referrer',
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      });
      expect(listed.text).toMatch(/<!doctype html|<html/i);

      for (const query of [
        `?parentOrigin=${encodeURIComponent(OTHER_SHOP)}`,
        '',
        '?parentOrigin=javascript:alert(1)',
      ]) {
        const refused = await sf(t, `${page}${query}`);
        expect(refused.status).toBe(403);
        expect(refused.headers['content-security-policy']).toContain("frame-ancestors 'none'");
        expect(refused.headers['cache-control']).toBe('no-store');
        expect(refused.text).not.toMatch(/<input|<script/i);
      }
    }
  });

  it('serves hashed assets for a year, and nothing outside them', async () => {
    const assets = readdirSync(join(__dirname, '..', '..', 'dist', 'secure-fields', 'assets'));
    const script = assets.find((name) => name.endsWith('.js'))!;
    const asset = await sf(t, `/assets/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    });
    for (const path of ['/assets/missing-abc.js', '/assets/..%2fcontroller.html', '/assets/.hidden', '/assets/']) {
      expectSfProblem(await sf(t, path), 404, 'route-not-found');
    }
  });

  it('serves nothing else on its host, not even with a token, while the API host serves everything as before', async () => {
    for (const [method, path] of [
      ['GET', '/buyers'],
      ['GET', '/'],
      ['GET', '/dashboard/'],
      ['GET', '/openapi.json'],
      ['POST', '/vault-forward'],
      ['GET', '/checkout/sessions/00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const answer = await sf(t, path, { method, headers: { authorization: `Bearer ${shop.token}` } });
      expectSfProblem(answer, 404, 'route-not-found');
    }
    expect((await http(t.url, '/buyers', { token: shop.token })).status).toBe(200);
  });

  it('collects a card from a listed origin without a token; the merchant then forwards it from the session', async () => {
    const c = card();
    const session = await createCheckoutSession(t, shop.token);
    const collected = await submit(t, session.id, SHOP, { method: 'card', ...c });
    expect(collected.status).toBe(200);
    expect(collected.headers['cache-control']).toBe('no-store');
    expect(collected.body.payment_method).toMatchObject({ label: c.number.slice(-4), scheme: 'visa' });
    expect(collected.text).not.toContain(c.number);

    const forwarded = await http(t.url, '/vault-forward', {
      method: 'POST',
      token: shop.token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-checkout-session': session.id,
        'content-type': 'application/json',
      },
      rawBody: '{"number":"{{ CARD_NUMBER_1 }}","cvv":"{{ CARD_SECURITY_CODE_1 }}"}',
    });
    expect(forwarded.status).toBe(200);
    const received = downstream.received.at(-1)!;
    expect(JSON.parse(received.body.toString('utf8'))).toEqual({ number: c.number, cvv: c.security_code });

    const line = logStrings(t.logs.text).find(
      (text) => text.includes('secure fields submission: collected') && text.includes(session.id),
    );
    expect(line).toBeDefined();
    expect(line).toContain(SHOP);
  });

  it('refuses an unlisted or missing parent origin, and the session stays empty', async () => {
    const session = await createCheckoutSession(t, shop.token);
    for (const origin of [OTHER_SHOP, null, 'not an origin', `${SHOP}/path`]) {
      expectSfProblem(
        await submit(t, session.id, origin, { method: 'card', ...card() }),
        403,
        'secure-fields-origin-not-allowed',
      );
    }
    // An origin listed by another merchant is not this session's.
    const other = await createMerchantWithConfig(t, downstream.port, 'Other shop');
    await t.get(MerchantAccountsService).update(other.id, { secureFieldsOrigins: [OTHER_SHOP] });
    expectSfProblem(
      await submit(t, session.id, OTHER_SHOP, { method: 'card', ...card() }),
      403,
      'secure-fields-origin-not-allowed',
    );
    const read = await http(t.url, `/checkout/sessions/${session.id}`, { token: shop.token });
    expect(read.body.payment_method).toBeNull();
  });

  it('answers the authenticated route’s codes for unknown and expired sessions, and validates the body', async () => {
    expectSfProblem(
      await submit(t, '00000000-0000-4000-8000-000000000000', SHOP, { method: 'card', ...card() }),
      404,
      'checkout-session-not-found',
    );
    expectSfProblem(
      await submit(t, 'not-a-uuid', SHOP, { method: 'card', ...card() }),
      404,
      'checkout-session-not-found',
    );

    const session = await createCheckoutSession(t, shop.token);
    const invalid = await submit(t, session.id, SHOP, { method: 'card', number: '4111', expiration_date: '07/31' });
    expectSfProblem(invalid, 400, 'validation-failed');

    await t.db.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      session.id,
    ]);
    expectSfProblem(await submit(t, session.id, SHOP, { method: 'card', ...card() }), 410, 'checkout-session-expired');
  });

  it('takes ten tries per session, counted in PostgreSQL across API processes; the eleventh is 429', async () => {
    const session = await createCheckoutSession(t, shop.token);
    for (let i = 0; i < 10; i++) {
      const app = i % 2 === 0 ? t : second;
      // Failures count as much as successes: every other try is refused for its origin.
      const answer = await submit(app, session.id, i % 4 === 3 ? OTHER_SHOP : SHOP, { method: 'card', ...card() });
      expect(answer.status).toBe(i % 4 === 3 ? 403 : 200);
    }
    const [row] = await t.db.query('SELECT secure_fields_tries FROM checkout_sessions WHERE id = $1', [session.id]);
    expect(row.secure_fields_tries).toBe(10);
    for (const app of [t, second]) {
      const eleventh = await submit(app, session.id, SHOP, { method: 'card', ...card() });
      expectSfProblem(eleventh, 429, 'secure-fields-tries-exhausted');
      expect(eleventh.headers['retry-after']).toBeUndefined();
    }
  });

  it('sees a merchant’s new origins in every process at once, and validates them in the API', async () => {
    // Both processes have looked the origin up (cached as unlisted) before the merchant lists it.
    const later = 'https://later-shop.example';
    for (const app of [t, second]) expect((await sf(app, `/input.html?parentOrigin=${later}`)).status).toBe(403);
    const instance = await (await createApiKey(t, null)).token(['merchant-accounts.read', 'merchant-accounts.write']);
    const updated = await http(t.url, `/merchant-accounts/${shop.id}`, {
      method: 'PUT',
      token: instance,
      body: { secure_fields_origins: [SHOP, 'https://LATER-shop.example:443'] },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.secure_fields_origins).toEqual([SHOP, later]);
    await waitFor(async () => (await sf(second, `/input.html?parentOrigin=${later}`)).status === 200, {
      what: 'the second process to see the new origin',
    });

    for (const bad of [
      'http://shop.example',
      'https://shop.example/path',
      'https://u:p@shop.example',
      '*',
      'https://shop.example?x=1',
    ]) {
      const refused = await http(t.url, `/merchant-accounts/${shop.id}`, {
        method: 'PUT',
        token: instance,
        body: { secure_fields_origins: [bad] },
      });
      expectProblem(refused, 400, 'validation-failed');
    }
    const tooMany = Array.from({ length: 21 }, (_, i) => `https://s${i}.example`);
    expectProblem(
      await http(t.url, `/merchant-accounts/${shop.id}`, {
        method: 'PUT',
        token: instance,
        body: { secure_fields_origins: tooMany },
      }),
      400,
      'validation-failed',
    );
    const read = await http(t.url, `/merchant-accounts/${shop.id}`, { token: instance });
    expect(read.body.secure_fields_origins).toEqual([SHOP, later]);
  });

  it('counts submissions by outcome', async () => {
    const metrics = await t.get(Metrics).scrape();
    expect(metrics.body).toMatch(/vault_forward_secure_fields_submissions_total\{outcome="collected"\} [1-9]/);
    expect(metrics.body).toMatch(/vault_forward_secure_fields_submissions_total\{outcome="origin_refused"\} [1-9]/);
    expect(metrics.body).toMatch(/vault_forward_secure_fields_submissions_total\{outcome="too_many_tries"\} [1-9]/);
  });

  it('a submission to a traced API process: its spans carry nothing of the card', async () => {
    const receiver = await startOtlpReceiver();
    const traced = startEntryPoint('dist/main.js', {
      env: entryPointEnv({
        DATABASE_URL: database.url,
        PORT: '0',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      }),
      ready: /API listening on (http:\/\/\S+) /,
      timeoutMs: 90_000,
    });
    try {
      const url = (await traced.started)[1];
      const session = await createCheckoutSession(t, shop.token);
      const fields = card();
      const answer = await sf({ url } as TestApp, `/checkout/sessions/${session.id}/fields`, {
        method: 'PUT',
        headers: { 'x-secure-fields-parent-origin': SHOP },
        body: { payment_method: { method: 'card', ...fields } },
      });
      expect(answer.status).toBe(200);
      // The request's server span has reached the receiver.
      await waitFor(() => receiver.spans.some((span) => span.values.join(' ').includes(session.id)), {
        timeoutMs: 15_000,
        what: 'the submission’s spans',
      });
      const texts = receiver.spans.flatMap((span) => [...span.values, ...stringsOf(span.attributes)]);
      for (const secret of [...secrets, `"${fields.security_code}"`])
        expect(texts.filter((text) => text.includes(secret))).toEqual([]);
    } finally {
      traced.child.kill('SIGTERM');
      await traced.exited;
      await receiver.close();
    }
  }, 120_000);

  it('leaves nothing of the cards in the logs or, once the sessions are erased, in the database', async () => {
    // Expired now, then erased by the purge every API process runs.
    await t.db.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second'`);
    await t.get(CheckoutSessionsRepository).purgeExpired();
    const dump = dataDump(database.url);
    const logs = logStrings(t.logs.text + '\n' + second.logs.text);
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(dump).not.toContain(secret);
      expect(logs.filter((line) => line.includes(secret))).toEqual([]);
    }
  });
});
