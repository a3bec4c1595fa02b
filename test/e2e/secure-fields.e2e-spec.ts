import { execFile } from 'node:child_process';
import { launchChromium } from '../support/chromium';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { luhnValid } from '../../src/platform/card-data/card-numbers';
import { CheckoutSessionPurge } from '../../src/modules/payments/checkout-sessions/checkout-session-purge';
import { createApiKey } from '../factories/api-keys';
import { cardNumber } from '../factories/cards';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

const run = promisify(execFile);
/** The official library's browser build, served to the shop page byte for byte. */
const LIBRARY = readFileSync(require.resolve('@gr4vy/secure-fields'));

const FULL_BODY =
  '{"number":"{{ CARD_NUMBER_1 }}",' +
  '"expiry":"{{ CARD_EXPIRATION_DATE_MM_1 }}/{{ CARD_EXPIRATION_DATE_YY_1 }}","cvv":"{{ CARD_SECURITY_CODE_1 }}"}';

interface ShopRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

interface PageConfig {
  sessionId: string;
  paymentMethod?: { id: string; scheme: string };
  styles?: Record<string, unknown>;
}

interface Shop {
  origin: string;
  requests: ShopRequest[];
  close(): Promise<void>;
}

/**
 * A merchant's web shop on http://<name>.localhost:<port> (Chromium resolves *.localhost to loopback): its server
 * creates the checkout session with the merchant's token and renders the page with its id; the page loads the
 * unmodified library from the shop's own origin and mounts the fields from the API's secure-fields origin. POST /pay
 * makes the merchant's server forward with x-vault-forward-checkout-session. Every request it receives is kept.
 */
function startShop(
  name: string,
  options: {
    frameUrl: string;
    createSession: (expiresIn?: number) => Promise<string>;
    forward: (sessionId: string) => Promise<{ status: number; body: string }>;
  },
): Promise<Shop> {
  const requests: ShopRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const url = new URL(req.url!, 'http://shop');
      void (async () => {
        if (url.pathname === '/secure-fields.js') {
          res.writeHead(200, { 'content-type': 'text/javascript' });
          return res.end(LIBRARY);
        }
        if (url.pathname === '/pay' && req.method === 'POST') {
          const answer = await options.forward((JSON.parse(body) as { session: string }).session);
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          return res.end(answer.body);
        }
        if (url.pathname === '/') {
          const config: PageConfig = JSON.parse(url.searchParams.get('config') ?? '{}');
          const expiresIn = url.searchParams.get('expiresIn');
          config.sessionId ??= await options.createSession(expiresIn ? Number(expiresIn) : undefined);
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          return res.end(shopPage(options.frameUrl, config));
        }
        res.writeHead(404);
        res.end();
      })().catch((error: unknown) => {
        res.writeHead(500);
        res.end(String(error));
      });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        origin: `http://${name}.localhost:${(server.address() as AddressInfo).port}`,
        requests,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }),
    ),
  );
}

/** The merchant's page: what a Gr4vy merchant writes, with SECURE_FIELDS_FRAME_URL pointing at us. */
function shopPage(frameUrl: string, config: PageConfig): string {
  const json = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
<body>
<form id="checkout">
  <label>Card number <div id="cc-number"></div></label>
  <label>Expiry <div id="cc-expiry"></div></label>
  <label>Security code <div id="cc-security-code"></div></label>
</form>
<script>window.SECURE_FIELDS_FRAME_URL = ${json(frameUrl)};</script>
<script src="/secure-fields.js"></script>
<script>
  const config = ${json(config)};
  window.events = [];
  const secureFields = new SecureFields({
    gr4vyId: 'vault',
    environment: 'sandbox',
    sessionId: config.sessionId,
    ...(config.paymentMethod ? { paymentMethod: config.paymentMethod } : {}),
  });
  const names = {
    ready: SecureFields.Events.READY,
    formChange: SecureFields.Events.FORM_CHANGE,
    success: SecureFields.Events.CARD_VAULT_SUCCESS,
    failure: SecureFields.Events.CARD_VAULT_FAILURE,
  };
  for (const [name, event] of Object.entries(names)) {
    secureFields.addEventListener(event, (data) => window.events.push({ name, data }));
  }
  if (!config.paymentMethod) {
    secureFields.addCardNumberField('#cc-number', { placeholder: '1234 1234 1234 1234', styles: config.styles });
    secureFields.addExpiryDateField('#cc-expiry');
  }
  secureFields.addSecurityCodeField('#cc-security-code');
  window.secureFields = secureFields;
</script>
</body></html>`;
}

describe('Secure Fields (real Chromium, the unmodified @gr4vy/secure-fields library)', () => {
  let t: TestApp;
  let downstream: Downstream;
  let browser: Browser;
  let context: BrowserContext;
  let frameUrl: string;
  let instanceToken: () => Promise<string>;
  const shops: Shop[] = [];
  /** Every PUT the browser sent, by URL: counted where it would leave, in the browser. */
  const puts: string[] = [];
  /** CSP violations in any frame: none is expected (no inline script or style, nothing from elsewhere). */
  const violations: string[] = [];
  /** Every card number and security code typed: none may appear in a log line, on a shop or in a dump. */
  const secrets: string[] = [];

  interface Merchant {
    id: string;
    token: () => Promise<string>;
    shop: Shop;
  }
  let a: Merchant;
  let b: Merchant;

  async function createMerchant(name: string): Promise<Merchant> {
    const id = `m-${randomBytes(5).toString('hex')}`;
    const merchant = { id, token: async () => '' } as Merchant;
    const shop = await startShop(name, {
      frameUrl,
      createSession: async (expiresIn) => {
        const created = await http(t.url, '/checkout/sessions', {
          method: 'POST',
          token: await merchant.token(),
          body: expiresIn ? { expires_in: expiresIn } : {},
        });
        expect(created.status).toBe(201);
        return created.body.id as string;
      },
      forward: async (sessionId) => {
        const answer = await http(t.url, '/vault-forward', {
          method: 'POST',
          token: await merchant.token(),
          headers: {
            'x-vault-forward-url': `${downstream.url}/pay`,
            'x-vault-forward-http-method': 'POST',
            'x-vault-forward-checkout-session': sessionId,
            'content-type': 'application/json',
          },
          rawBody: FULL_BODY,
        });
        return { status: answer.status, body: answer.text };
      },
    });
    merchant.shop = shop;
    shops.push(shop);
    const created = await http(t.url, '/merchant-accounts', {
      method: 'POST',
      token: await instanceToken(),
      body: { id, display_name: `Shop ${name}`, secure_fields_origins: [shop.origin] },
    });
    expect(created.status).toBe(201);
    expect(created.body.secure_fields_origins).toEqual([shop.origin]);
    const key = await createApiKey(t, id);
    merchant.token = () => key.token();
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token: await merchant.token(),
      body: { display_name: 'PSP', hosts: [`127.0.0.1:${downstream.port}`] },
    });
    expect(config.status).toBe(201);
    return merchant;
  }

  beforeAll(async () => {
    downstream = await startHttpDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    frameUrl = `http://secure-fields.localhost:${new URL(t.url).port}`;
    const instanceKey = await createApiKey(t, null, 'ES256');
    instanceToken = () => instanceKey.token();
    a = await createMerchant('shop-a');
    b = await createMerchant('shop-b');

    browser = await launchChromium();
    context = await browser.newContext();
    context.on('request', (request) => {
      if (request.method() === 'PUT') puts.push(request.url());
    });
    await context.exposeBinding('reportViolation', (_source, text: string) => violations.push(text));
    // Browser-side code as strings: the server's tsconfig has no DOM types, on purpose. Runs in every frame.
    await context.addInitScript(
      `document.addEventListener('securitypolicyviolation', (e) => ` +
        `window.reportViolation(location.origin + ' ' + e.violatedDirective + ' ' + e.blockedURI))`,
    );
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await downstream?.close();
    for (const shop of shops) await shop.close();
  });

  afterAll(() => {
    // Checked last: nothing typed in any log line of the API, and the frames broke no CSP rule.
    const logs = t.logs.text.replace(/\\?"content-length\\?":\\?"[0-9]+\\?"/g, '');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(logs).not.toContain(secret);
    expect(violations).toEqual([]);
  });

  function card(prefix = '4', length = 16) {
    const number = cardNumber(prefix, length);
    const securityCode = String(prefix === '37' ? 1000 + randomInt(9000) : 100 + randomInt(900));
    secrets.push(number, number.slice(-12), `"${securityCode}"`);
    return { number, expiry: '07/31', securityCode };
  }
  const randomInt = (n: number) => randomBytes(4).readUInt32BE() % n;

  async function openShop(merchant: Merchant, query: Record<string, string> = {}, config?: Partial<PageConfig>) {
    const page = await context.newPage();
    const params = new URLSearchParams(query);
    if (config) params.set('config', JSON.stringify(config));
    await page.goto(`${merchant.shop.origin}/?${params.toString()}`);
    await waitForEvent(page, 'ready');
    return page;
  }

  function events(page: Page, name: string): Promise<Array<Record<string, any>>> {
    return page.evaluate(`window.events.filter((e) => e.name === ${JSON.stringify(name)}).map((e) => e.data)`);
  }

  /** Waits until the page has seen `count` events of a name; returns the last. */
  async function waitForEvent(page: Page, name: string, count = 1): Promise<Record<string, any>> {
    const seen = await waitFor(
      async () => {
        const list = await events(page, name);
        return list.length >= count && list;
      },
      { timeoutMs: 15_000, what: `${count} "${name}" event(s)` },
    );
    return seen[count - 1];
  }

  function field(page: Page, type: 'number' | 'expiryDate' | 'securityCode') {
    return page.frameLocator(`iframe#${type}`).locator('input');
  }

  /**
   * Types a card as a buyer would. A valid number's scheme reaches the security code frame through the controller
   * (its length: 4 for Amex) before the controller tells the page the number is valid, so the code is typed after.
   */
  async function typeCard(page: Page, c: { number: string; expiry: string; securityCode?: string }) {
    await field(page, 'number').pressSequentially(c.number);
    if (luhnValid(c.number)) {
      await waitFor(async () => (await events(page, 'formChange')).at(-1)?.fields.number.valid, {
        timeoutMs: 15_000,
        what: 'the number valid',
      });
    }
    await field(page, 'expiryDate').pressSequentially(c.expiry.replace('/', ''));
    if (c.securityCode) await field(page, 'securityCode').pressSequentially(c.securityCode);
  }

  async function sessionIdOf(page: Page): Promise<string> {
    return page.evaluate('config.sessionId');
  }

  /** Submits and waits for its one answer: the new `success` or `failure` event. */
  async function submit(page: Page): Promise<{ success?: any; failure?: any }> {
    const before = [(await events(page, 'success')).length, (await events(page, 'failure')).length];
    await page.evaluate('window.secureFields.submit()');
    const [successes, failures] = await waitFor(
      async () => {
        const seen = [await events(page, 'success'), await events(page, 'failure')];
        return seen[0].length + seen[1].length > before[0] + before[1] && seen;
      },
      { timeoutMs: 15_000, what: 'the answer to a submit' },
    );
    expect(successes.length + failures.length).toBe(before[0] + before[1] + 1);
    return successes.length > before[0] ? { success: successes.at(-1) } : { failure: failures.at(-1) };
  }

  /** A computed style inside the (cross-origin) frame, read through the frame's own context. */
  function computed(element: ReturnType<typeof field>, property: string): Promise<string> {
    // The server's tsconfig has no DOM types, on purpose: the element is reached through `any`.
    return element.evaluate(
      (el: any, name: string) => el.ownerDocument.defaultView.getComputedStyle(el).getPropertyValue(name) as string,
      property,
    );
  }

  /** The API's one log line per submission that reached it, for a session. */
  function submissionsLogged(sessionId: string): number {
    return t.logs.text.split('\n').filter((l) => l.includes('secure fields submission') && l.includes(sessionId))
      .length;
  }

  /** The page asks its own server to pay: the merchant's server forwards with the session. */
  function pay(page: Page): Promise<number> {
    return page.evaluate(
      `fetch('/pay', { method: 'POST', body: JSON.stringify({ session: config.sessionId }) }).then((r) => r.status)`,
    );
  }

  /** Whatever the shop's page holds and ran: its DOM, its scripts, its events, its storage. */
  async function pageText(page: Page): Promise<string> {
    const held: string = await page.evaluate(
      `JSON.stringify(window.events) + [...document.scripts].map((s) => s.text).join('') + ` +
        `JSON.stringify({ ...localStorage }) + document.cookie`,
    );
    return (await page.content()) + held;
  }

  it('a typed card goes from the frames into the session, the shop forwards it, and the code is then gone', async () => {
    const c = card('37', 15);
    const page = await openShop(a);
    const sessionId = await sessionIdOf(page);
    expect(await field(page, 'number').getAttribute('autocomplete')).toBe('cc-number');
    expect(await field(page, 'expiryDate').getAttribute('autocomplete')).toBe('cc-exp');
    expect(await field(page, 'securityCode').getAttribute('autocomplete')).toBe('cc-csc');
    expect(await field(page, 'number').getAttribute('inputmode')).toBe('numeric');
    expect(await page.frameLocator('iframe#number').getByLabel('Card number').count()).toBe(1);

    await typeCard(page, c);
    // Amex: 4-6-5, a 4-digit code.
    expect(await field(page, 'number').inputValue()).toBe(
      `${c.number.slice(0, 4)} ${c.number.slice(4, 10)} ${c.number.slice(10)}`,
    );
    expect(await field(page, 'expiryDate').inputValue()).toBe('07/31');
    const change = await waitFor(async () => (await events(page, 'formChange')).find((e) => e.complete), {
      timeoutMs: 15_000,
      what: 'a complete form-change',
    });
    expect(change.fields).toEqual({
      number: { valid: true, empty: false, autofilled: false },
      expiryDate: { valid: true, empty: false, autofilled: false },
      securityCode: { valid: true, empty: false, autofilled: false },
    });

    const { success, failure } = await submit(page);
    expect(failure).toBeUndefined();
    expect(success).toMatchObject({ id: sessionId });
    expect(puts.filter((u) => u.includes(sessionId))).toEqual([`${frameUrl}/checkout/sessions/${sessionId}/fields`]);

    // The merchant's server forwards; the target receives number, expiry and code.
    const paid = await pay(page);
    expect(paid).toBe(200);
    expect(JSON.parse(downstream.received.at(-1)!.body.toString())).toEqual({
      number: c.number,
      expiry: '07/31',
      cvv: c.securityCode,
    });
    // The code was answered below 500: gone from the row, and a second forward is refused.
    const [row] = await t.db.query(`SELECT security_code_ciphertext FROM checkout_sessions WHERE id = $1`, [sessionId]);
    expect(row.security_code_ciphertext).toBeNull();
    const again = await http(t.url, '/vault-forward', {
      method: 'POST',
      token: await a.token(),
      headers: {
        'x-vault-forward-url': `${downstream.url}/pay`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-checkout-session': sessionId,
        'content-type': 'application/json',
      },
      rawBody: FULL_BODY,
    });
    expectProblem(again, 410, 'checkout-session-security-code-erased');

    // The shop never held the card: not in its page, its scripts, its events, nor any request it received.
    const text = await pageText(page);
    const shopRequests = JSON.stringify(a.shop.requests);
    // A code is short: looked for as a value would hold it (a 4-digit run can occur in a port or an id by chance).
    for (const secret of [c.number, c.number.slice(-12), `"${c.securityCode}"`, `=${c.securityCode}`]) {
      expect(text).not.toContain(secret);
      expect(shopRequests).not.toContain(secret);
    }
    await page.close();
  });

  it('two merchants’ pages open at once each get their own card', async () => {
    const cardA = card('4', 16);
    const cardB = card('5', 16);
    const pageA = await openShop(a);
    const pageB = await openShop(b);
    // Interleaved, field by field.
    await field(pageA, 'number').pressSequentially(cardA.number);
    await field(pageB, 'number').pressSequentially(cardB.number);
    await field(pageA, 'expiryDate').pressSequentially('0731');
    await field(pageB, 'expiryDate').pressSequentially('0731');
    await field(pageB, 'securityCode').pressSequentially(cardB.securityCode);
    await field(pageA, 'securityCode').pressSequentially(cardA.securityCode);
    await Promise.all([pageA.evaluate('window.secureFields.submit()'), pageB.evaluate('window.secureFields.submit()')]);
    await waitForEvent(pageA, 'success');
    await waitForEvent(pageB, 'success');
    for (const [merchant, p, c] of [
      [a, pageA, cardA],
      [b, pageB, cardB],
    ] as const) {
      const session = await http(t.url, `/checkout/sessions/${await sessionIdOf(p)}`, {
        token: await merchant.token(),
      });
      expect(session.body.payment_method).toMatchObject({ label: c.number.slice(-4) });
      expect(await pay(p)).toBe(200);
      expect(JSON.parse(downstream.received.at(-1)!.body.toString())).toEqual({
        number: c.number,
        expiry: '07/31',
        cvv: c.securityCode,
      });
    }
    await pageA.close();
    await pageB.close();
  });

  it('a page on an origin the session’s merchant did not list gets nothing into the session', async () => {
    // Shop B's page (an origin B lists, so the frames load) carrying merchant A's session.
    const c = card();
    const sessionA = await http(t.url, '/checkout/sessions', { method: 'POST', token: await a.token(), body: {} });
    const p = await openShop(b, {}, { sessionId: sessionA.body.id });
    await typeCard(p, c);
    const { failure } = await submit(p);
    expect(failure).toMatchObject({ type: 'error', status: expect.any(Number), code: expect.any(String) });
    expect(failure.status).toBeGreaterThanOrEqual(400);
    expect(failure.message).toEqual(expect.any(String));
    const session = await http(t.url, `/checkout/sessions/${sessionA.body.id}`, { token: await a.token() });
    expect(session.body.payment_method).toBeNull();
    await p.close();

    // An origin no merchant lists: the frames refuse to render, so nothing can be typed at all.
    const stranger = await startShop('stranger', {
      frameUrl,
      createSession: async () => sessionA.body.id as string,
      forward: async () => ({ status: 500, body: '' }),
    });
    shops.push(stranger);
    const strangerPage = await context.newPage();
    const frameAnswer = strangerPage.waitForResponse((r) => r.url().startsWith(`${frameUrl}/input.html`));
    await strangerPage.goto(`${stranger.origin}/`, { waitUntil: 'load' });
    expect((await frameAnswer).status()).toBe(403);
    for (const frame of strangerPage.frames()) {
      expect(
        await frame
          .locator('input')
          .count()
          .catch(() => 0),
      ).toBe(0);
    }
    expect((await events(strangerPage, 'ready')).length).toBe(0);
    await strangerPage.close();
  });

  it('an unknown or expired session → CARD_VAULT_FAILURE with a status and a code', async () => {
    const unknown = await openShop(a, {}, { sessionId: randomUUID() });
    await typeCard(unknown, card());
    const { failure } = await submit(unknown);
    expect(failure).toMatchObject({ status: 404, code: expect.any(String), message: expect.any(String) });
    expect(failure.data).toMatchObject({ status: 404, code: failure.code });
    await unknown.close();

    const expired = await openShop(a, { expiresIn: '2' });
    const sessionId = await sessionIdOf(expired);
    await waitFor(
      async () =>
        (await t.db.query(`SELECT expires_at <= now() AS due FROM checkout_sessions WHERE id = $1`, [sessionId]))[0]
          .due,
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    await typeCard(expired, card());
    const late = await submit(expired);
    expect(late.failure).toMatchObject({ status: 410, code: 'checkout-session-expired' });
    await expired.close();
  });

  it('an invalid number never reaches the API; the 11th try at a session is 429', async () => {
    const p = await openShop(a);
    const sessionId = await sessionIdOf(p);
    const c = card();
    const wrong = c.number.slice(0, -1) + String((Number(c.number.at(-1)) + 1) % 10);
    await typeCard(p, { ...c, number: wrong });
    expect(await field(p, 'number').getAttribute('aria-invalid')).toBe('true');
    const formChanges = await events(p, 'formChange');
    expect(formChanges.at(-1)).toMatchObject({ complete: false, fields: { number: { valid: false } } });
    const { failure } = await submit(p);
    expect(failure).toMatchObject({ status: 400, code: 'invalid_card_data' });
    expect(puts.filter((u) => u.includes(sessionId))).toEqual([]);
    expect(submissionsLogged(sessionId)).toBe(0);

    // Corrected: tries 1–10 are taken, the 11th is refused.
    await field(p, 'number').fill('');
    await field(p, 'number').pressSequentially(c.number);
    for (let i = 1; i <= 10; i++) expect(await submit(p)).toMatchObject({ success: { id: sessionId } });
    expect((await submit(p)).failure).toMatchObject({ status: 429, code: expect.any(String) });
    expect(puts.filter((u) => u.includes(sessionId))).toHaveLength(11);
    await waitFor(() => submissionsLogged(sessionId) === 11, { timeoutMs: 15_000, what: '11 submissions logged' });
    await p.close();
  });

  it('a stored card: the security code alone, submitted with method id', async () => {
    const c = card('37', 15);
    const stored = await http(t.url, '/payment-methods', {
      method: 'POST',
      token: await a.token(),
      body: { method: 'card', number: c.number, expiration_date: '07/31' },
    });
    expect(stored.status).toBe(201);
    const sessionId = (await http(t.url, '/checkout/sessions', { method: 'POST', token: await a.token(), body: {} }))
      .body.id as string;
    const p = await openShop(a, {}, { sessionId, paymentMethod: { id: stored.body.id, scheme: 'amex' } });
    expect(await p.locator('iframe#number').count()).toBe(0);
    await field(p, 'securityCode').pressSequentially(`${c.securityCode}9`);
    // Amex: four digits, the fifth refused.
    expect(await field(p, 'securityCode').inputValue()).toBe(c.securityCode);
    await waitFor(async () => (await events(p, 'formChange')).some((e) => e.complete), {
      timeoutMs: 15_000,
      what: 'complete',
    });
    const { success, failure } = await submit(p);
    expect(failure).toBeUndefined();
    expect(success).toMatchObject({ id: sessionId });
    expect(await pay(p)).toBe(200);
    expect(JSON.parse(downstream.received.at(-1)!.body.toString())).toEqual({
      number: c.number,
      expiry: '07/31',
      cvv: c.securityCode,
    });
    await p.close();
  });

  it('styles from the allow-list apply, in their states; a url() is dropped', async () => {
    const p = await openShop(
      a,
      {},
      {
        styles: {
          color: 'rgb(1, 2, 3)',
          cursor: `url(${a.shop.origin}/evil.cur), pointer`,
          fontSize: '21px',
          ':focus': { color: 'rgb(4, 5, 6)' },
        },
      },
    );
    const number = field(p, 'number');
    await waitFor(async () => (await computed(number, 'font-size')) === '21px', {
      timeoutMs: 15_000,
      what: 'the page’s styles applied',
    });
    expect(await computed(number, 'color')).toBe('rgb(1, 2, 3)');
    expect(await computed(number, 'cursor')).not.toContain('url');
    await number.focus();
    expect(await computed(number, 'color')).toBe('rgb(4, 5, 6)');
    expect(a.shop.requests.map((r) => r.url)).not.toContain('/evil.cur');
    await p.close();
  });

  it('after expiry nothing of a typed card is left in the database (pg_dump)', async () => {
    const c = card();
    const p = await openShop(a);
    const sessionId = await sessionIdOf(p);
    await typeCard(p, c);
    const { success } = await submit(p);
    expect(success).toMatchObject({ id: sessionId });
    await p.close();
    // Expired now (as the purge test of checkout sessions does), then purged.
    await t.db.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      sessionId,
    ]);
    await t.get(CheckoutSessionPurge).run();
    const { stdout } = await run('pg_dump', ['--data-only', process.env.TEST_DATABASE_URL!], {
      maxBuffer: 256 * 1024 * 1024,
    });
    expect(stdout).toContain(sessionId);
    expect(stdout).not.toContain(c.number);
    expect(stdout).not.toContain(c.number.slice(-12));
    const line = stdout.split('\n').find((l) => l.startsWith(sessionId))!;
    expect(line).not.toContain(c.securityCode);
  });
});
