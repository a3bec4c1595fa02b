import { randomUUID } from 'node:crypto';
import { launchChromium } from '../support/chromium';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, ConsoleMessage, Page } from 'playwright-core';
import { ForwardJobsWorkerModule } from '../../src/modules/forwarding/jobs/forward-jobs.module';
import { createApiKey } from '../factories/api-keys';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { closedPort } from '../support/downstream';
import { queuedForwardEnv, startScriptedDownstream } from '../support/forward-jobs';
import { http } from '../support/http';
import { dropQueueKeys } from '../support/redis-keys';
import { hmac } from '../support/independent-crypto';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { testTempDir } from '../support/temp-data-dir';

const ARTIFACTS = join(__dirname, '..', 'artifacts');
const SECRET = `whsec_dashboard_${randomUUID()}`;

/**
 * A downstream that checks the HMAC signature itself (node:crypto, the secret the test typed into
 * the page): 200 when it verifies, 401 otherwise.
 */
function startVerifyingDownstream() {
  const verdicts: Array<{ ok: boolean; body: string }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const timestamp = String(req.headers['x-timestamp'] ?? '');
      const expected = hmac('sha256', SECRET, [`${timestamp}.`, body], 'hex');
      const fresh = Math.abs(Number(timestamp) - Date.now() / 1000) < 60;
      const ok = fresh && req.headers['x-signature'] === expected;
      verdicts.push({ ok, body: body.toString('utf8') });
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ verified: ok }));
    });
  });
  return new Promise<{ port: number; verdicts: typeof verdicts; close(): Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        verdicts,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }),
    ),
  );
}

describe('dashboard (real Chromium against the real API)', () => {
  let t: TestApp;
  const env = queuedForwardEnv('test-dashboard');
  let browser: Browser;
  let page: Page;
  let downstream: Awaited<ReturnType<typeof startVerifyingDownstream>>;
  let merchant: string;
  let merchantKeyFile: string;
  let instanceKeyFile: string;
  let token: string;
  let card: { id: string; number: string };
  let failedJobId: string;
  let instanceToken: () => Promise<string>;
  const consoleErrors: string[] = [];
  const violations: string[] = [];

  async function shot(name: string) {
    await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    downstream = await startVerifyingDownstream();
    t = await startTestApp({
      env,
      // Queued forwards run in this process, so a failed job exists without a worker process.
      imports: [ForwardJobsWorkerModule],
    });
    merchant = (await createMerchantAccount(t, { displayName: 'Dashboard Shop' })).id;
    const merchantKey = await createApiKey(t, merchant);
    const instanceKey = await createApiKey(t, null, 'ES256');
    const dir = testTempDir('vf-dashboard-');
    merchantKeyFile = join(dir, 'merchant.pem');
    instanceKeyFile = join(dir, 'instance.pem');
    writeFileSync(merchantKeyFile, merchantKey.privateKeyPem, { mode: 0o600 });
    writeFileSync(instanceKeyFile, instanceKey.privateKeyPem, { mode: 0o600 });
    token = await merchantKey.token();
    instanceToken = () => instanceKey.token();
    for (let i = 1; i <= 25; i++) {
      expect(
        (
          await http(t.url, '/buyers', {
            method: 'POST',
            token,
            body: { display_name: `Buyer ${String(i).padStart(2, '0')}`, external_identifier: `ext-${i}` },
          })
        ).status,
      ).toBe(201);
    }
    const number = cardNumber('4', 16);
    card = { id: (await createCard(t, merchant, { number, expiration_date: '04/31' })).id, number };

    // A queued forward that fails: its target refuses connections, twice.
    const dead = await closedPort();
    await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Dead end', hosts: [`127.0.0.1:${dead}`] },
    });
    const queued = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        prefer: 'respond-async',
        'x-vault-forward-url': `http://127.0.0.1:${dead}/charge`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-max-attempts': '2',
        'content-type': 'application/json',
      },
      rawBody: '{"amount":1}',
    });
    expect(queued.status).toBe(202);
    failedJobId = queued.body.id;
    await waitFor(
      async () => (await http(t.url, `/vault-forward/jobs/${failedJobId}`, { token })).body.status === 'failed',
      { timeoutMs: 20_000, what: 'the job to fail' },
    );

    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (message: ConsoleMessage) => {
      // The API's own 4xx answers (the test provokes some) are logged by Chromium as failed loads;
      // anything else, and any failed load of the dashboard's own files, counts.
      const apiAnswer =
        /^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text()) &&
        !message.location().url.includes('/dashboard');
      if ((message.type() === 'error' && !apiAnswer) || message.type() === 'warning')
        consoleErrors.push(`${message.type()}: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => consoleErrors.push(String(error)));
    await page.exposeFunction('reportViolation', (text: string) => violations.push(text));
    // Browser-side code as strings: the server's tsconfig has no DOM types, on purpose.
    await page.addInitScript(
      `document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(e.violatedDirective + ' ' + e.blockedURI))`,
    );
  }, 120_000);

  /** Vault Forwarding → the config's authentication methods → "Add authentication". */
  async function openAddAuthentication(config: string) {
    await page.locator('.breadcrumb').getByRole('link', { name: 'Vault Forwarding' }).click();
    const row = page.getByRole('row', { name: new RegExp(config) });
    await row.waitFor();
    await row.getByText('Actions').click();
    await row.getByRole('link', { name: 'Edit authentication methods' }).click();
    await page.getByRole('heading', { name: new RegExp(`Authentication methods · ${config}`) }).waitFor();
    await page.getByRole('button', { name: 'Add authentication' }).click();
  }

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await downstream?.close();
    await dropQueueKeys(env.FORWARD_QUEUE_NAME);
  });

  it('serves /dashboard with a strict CSP, X-Frame-Options DENY, and keeps it out of the API document', async () => {
    const redirect = await http(t.url, '/dashboard');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/dashboard/');
    const index = await http(t.url, '/dashboard/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = index.headers.get('content-security-policy')!;
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "object-src 'none'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain('unsafe');
    expect(index.headers.get('x-frame-options')).toBe('DENY');
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    // No inline script or style, and nothing from another origin.
    expect(index.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(index.text).not.toMatch(/<style|style=/);
    expect(index.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(index.text)![1];
    const asset = await http(t.url, script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(asset.headers.get('content-security-policy')).toBe(csp);
    expect(asset.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost|www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\//i);
    expect((await http(t.url, '/dashboard/nope.js')).status).toBe(404);
    const doc = (await http(t.url, '/openapi.json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/dashboard'))).toEqual([]);
  });

  it('signs in with a key file, adds a forwarding config and an hmac-signature method whose UUID works in a real forward', async () => {
    await page.goto(`${t.url}/dashboard`);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await shot('sign-in');
    await page.getByRole('link', { name: 'How do I get a key?' }).click();
    await page.getByRole('heading', { name: 'Getting an API key' }).waitFor();
    // What revoking takes in each setup, not "at once" (the default setup has no Redis to spread it).
    await page.getByText(/keep working for up to 60 seconds/).waitFor();
    await shot('help');
    await page.goBack();

    await page.getByLabel('API key file (PEM)').setInputFiles(merchantKeyFile);
    await page.getByRole('button', { name: 'Sign in with key' }).click();
    // A merchant key lands on Settings → Configuration → Vault Forwarding.
    await page.getByRole('heading', { name: 'Vault Forwarding', level: 2 }).waitFor();
    expect(await page.locator('.who').textContent()).toContain(merchant);
    expect(
      await page.evaluate(
        'JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie',
      ),
    ).toBe('{}{}');

    await page.getByRole('button', { name: 'Add forwarding config' }).click();
    await page.getByLabel('Name').fill('Acme PSP');
    await page.getByLabel('Hosts').fill('https://acme.example/pay');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    // The problem's message sits next to the field it names.
    const hostsError = page.locator('#cfg-hosts-error');
    await hostsError.waitFor();
    expect(await hostsError.textContent()).toContain('or an origin (https://host[:port]), without path');
    expect(await page.getByLabel('Hosts').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Hosts').fill(`127.0.0.1:${downstream.port}`);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const row = page.getByRole('row', { name: /Acme PSP/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('Enabled');
    await shot('vault-forwarding');

    // Disable and enable again through the actions menu (status in words, not colour only).
    await row.getByText('Actions').click();
    await row.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('row', { name: /Acme PSP.*Disabled/ }).waitFor();
    await row.getByText('Actions').click();
    await row.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('row', { name: /Acme PSP.*Enabled/ }).waitFor();

    // Bodies are not recorded until the config asks (decision 0138): turned on here, kept 3 days.
    expect(await row.textContent()).toContain('Not recorded');
    await row.getByText('Actions').click();
    await row.getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel(/Record bodies/).isChecked()).toBe(false);
    expect(await page.getByLabel(/Keep them/).inputValue()).toBe('7');
    await page.getByLabel(/Record bodies/).check();
    await page.getByLabel(/Keep them/).fill('3');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('row', { name: /Acme PSP.*Recorded, kept 3 days/ }).waitFor();
    const acmeConfig = (await http(t.url, '/vault-forward/configs', { token })).body.items.find(
      (c: { display_name: string }) => c.display_name === 'Acme PSP',
    );
    expect(acmeConfig).toMatchObject({ record_bodies: true, record_bodies_retention_days: 3 });

    await row.getByText('Actions').click();
    await row.getByRole('link', { name: 'Edit authentication methods' }).click();
    await page.getByRole('heading', { name: /Authentication methods · Acme PSP/ }).waitFor();
    await page.getByRole('button', { name: 'Add authentication' }).click();
    await page.getByLabel('Method', { exact: true }).selectOption('hmac-signature');
    await page.getByLabel('Label', { exact: true }).fill('Acme signing key');
    // A bad header name first: the problem's message appears beside that generated field.
    await page.getByLabel(/^secret/).fill(SECRET);
    await page.getByLabel(/^algorithm/).selectOption('sha256');
    await page.getByLabel(/^encoding/).selectOption('hex');
    await page.getByLabel(/^header/).fill('X Signature');
    await page.getByLabel(/^timestamp_header/).fill('X-Timestamp');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator('#auth-field-header-error').waitFor();
    await page.getByLabel(/^header/).fill('X-Signature');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const uuid = (await page.getByTestId('added-uuid').textContent())!.trim();
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    await page.getByRole('button', { name: 'Copy UUID' }).click();
    await page
      .getByText(/Copied|Selected/)
      .first()
      .waitFor();
    // The secret is never shown again: not in the page, not in any field.
    expect(await page.content()).not.toContain(SECRET);
    expect(
      await page
        .locator('input, textarea')
        .evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value)),
    ).not.toContain(SECRET);
    expect(await page.getByTestId('method-uuid').allTextContents()).toContain(uuid);
    await shot('authentication-methods');

    const before = downstream.verdicts.length;
    const forwarded = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `http://127.0.0.1:${downstream.port}/charge`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        'x-vault-forward-authentications': uuid,
        'content-type': 'application/json',
      },
      rawBody: '{"number":"{{ CARD_NUMBER_1 }}"}',
    });
    expect(forwarded.status).toBe(200);
    expect(forwarded.body).toEqual({ verified: true });
    expect(downstream.verdicts[before]).toEqual({ ok: true, body: `{"number":"${card.number}"}` });
    const requestId = forwarded.headers.get('x-vault-forward-request-id');
    await waitFor(
      async () => (await http(t.url, `/vault-forward/requests/${requestId}`, { token })).body.status === 200,
      { what: 'the forward record' },
    );

    // Delete asks first; Cancel keeps the method.
    await page.getByRole('button', { name: 'Delete' }).first().click();
    await page.getByRole('alertdialog').waitFor();
    await page.keyboard.press('Escape');
    expect(await page.getByRole('alertdialog').count()).toBe(0);
    expect(await page.getByTestId('method-uuid').count()).toBe(1);

    // A method made in Gr4vy's shape (fields as [{key, value}]) shows its non-secret fields by key too.
    const configs = await http(t.url, '/vault-forward/configs', { token });
    const acme = configs.body.items.find((c: { display_name: string }) => c.display_name === 'Acme PSP');
    const gr4vy = await http(t.url, `/vault-forward/configs/${acme.id}/authentications`, {
      method: 'POST',
      token,
      body: {
        kind: 'signature',
        display_name: 'Made by a Gr4vy client',
        fields: [
          { key: 'secret', value: SECRET },
          { key: 'algorithm', value: 'sha256' },
          { key: 'encoding', value: 'hex' },
          { key: 'header', value: 'X-Gr4vy-Signature' },
        ],
      },
    });
    expect(gr4vy.status).toBe(201);
    // Away and back (a reload would sign out: the key lives in the tab only).
    await page.locator('.breadcrumb').getByRole('link', { name: 'Vault Forwarding' }).click();
    await row.waitFor();
    await row.getByText('Actions').click();
    await row.getByRole('link', { name: 'Edit authentication methods' }).click();
    const card2 = page.getByRole('article', { name: 'Made by a Gr4vy client' });
    await card2.waitFor();
    expect(await card2.locator('dt').allTextContents()).toEqual(['algorithm', 'encoding', 'header']);
    expect(await card2.locator('dd code.value').allTextContents()).toEqual(['sha256', 'hex', 'X-Gr4vy-Signature']);
    expect(await page.content()).not.toContain(SECRET);
  });

  it('builds the form of a config made from a definition from the definition’s fields (Gr4vy’s shape)', async () => {
    const id = `dashboard-psp-${randomUUID().slice(0, 8)}`;
    const secret = `psp-secret-${randomUUID()}`;
    const defined = await http(t.url, '/vault-forward/definitions', {
      method: 'POST',
      token: await instanceToken(),
      body: {
        id,
        display_name: 'Dashboard PSP',
        hosts: ['https://psp.dashboard.example'],
        authentications: [
          {
            kind: 'signature',
            title: 'Request signature',
            description: 'HMAC of the body.',
            fields: [
              {
                key: 'psp_secret',
                display_name: 'PSP secret',
                required: true,
                format: 'text',
                secret: true,
                maps_to: 'secret',
              },
              {
                key: 'psp_prefix',
                display_name: 'Signature prefix',
                required: false,
                format: 'text',
                secret: false,
                maps_to: 'prefix',
              },
            ],
            settings: { algorithm: 'sha256', encoding: 'hex', header: 'x-psp-signature' },
          },
        ],
      },
    });
    expect(defined.status).toBe(201);
    expect(
      (await http(t.url, '/vault-forward/configs', { method: 'POST', token, body: { definition_id: id } })).status,
    ).toBe(201);

    await openAddAuthentication('Dashboard PSP');
    expect(await page.getByLabel('Method', { exact: true }).locator('option').allTextContents()).toEqual([
      'Request signature (signature)',
    ]);
    await page.getByLabel('Label', { exact: true }).fill('Dashboard signing');
    await page.getByLabel(/^Signature prefix/).fill('v1=');
    // Required and secret, as the definition declares it.
    expect(await page.getByLabel(/^PSP secret/).getAttribute('required')).not.toBeNull();
    expect(await page.getByLabel(/^PSP secret/).getAttribute('type')).toBe('password');
    await page.getByLabel(/^PSP secret/).fill(secret);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const uuid = (await page.getByTestId('added-uuid').textContent())!.trim();
    const configs = (await http(t.url, '/vault-forward/configs', { token })).body.items;
    const configId = configs.find((c: { definition_id: string }) => c.definition_id === id).id;
    const method = await http(t.url, `/vault-forward/configs/${configId}/authentications/${uuid}`, { token });
    expect(method.body).toMatchObject({
      type: 'vault-forward-config-authentication',
      kind: 'signature',
      fields: [{ key: 'psp_prefix', value: 'v1=' }],
    });
    const card2 = page.getByRole('article', { name: 'Dashboard signing' });
    await card2.waitFor();
    expect(await card2.locator('dt').allTextContents()).toEqual(['psp_prefix']);
    expect(await card2.textContent()).toContain('Request signature');
    expect(await card2.textContent()).toContain('PSP secret');
    expect(await page.content()).not.toContain(secret);
  });

  it('renders the oauth2-client-credentials form from the kinds, and a PayPal REST config’s from its definition', async () => {
    const secret = `oauth-client-secret-${randomUUID()}`;
    const created = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'OAuth PSP', hosts: ['auth.psp.example', 'api.psp.example'] },
    });
    expect(created.status).toBe(201);
    await openAddAuthentication('OAuth PSP');
    await page.getByLabel('Method', { exact: true }).selectOption('oauth2-client-credentials');
    await page.getByLabel('Label', { exact: true }).fill('PSP OAuth client');
    expect(await page.getByLabel(/^token_url/).getAttribute('type')).toBe('url');
    expect(await page.getByLabel(/^client_secret/).getAttribute('type')).toBe('password');
    expect(
      await page
        .getByLabel(/^client_auth/)
        .locator('option')
        .allTextContents(),
    ).toEqual(['(not set)', 'basic', 'body']);
    for (const optional of ['scope', 'audience'])
      expect(await page.getByLabel(new RegExp(`^${optional}`)).count()).toBe(1);
    await page.getByLabel(/^token_url/).fill('https://auth.psp.example/oauth2/token');
    await page.getByLabel(/^client_id/).fill('dashboard-client');
    await page.getByLabel(/^client_secret/).fill(secret);
    await page.getByLabel(/^scope/).fill('payments');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const uuid = (await page.getByTestId('added-uuid').textContent())!.trim();
    const method = await http(t.url, `/vault-forward/configs/${created.body.id}/authentications/${uuid}`, { token });
    expect(method.body).toMatchObject({
      kind: 'oauth2-client-credentials',
      fields: { token_url: 'https://auth.psp.example/oauth2/token', client_id: 'dashboard-client', scope: 'payments' },
    });
    expect(method.text).not.toContain(secret);
    expect(await page.content()).not.toContain(secret);

    expect(
      (await http(t.url, '/vault-forward/configs', { method: 'POST', token, body: { definition_id: 'paypal-rest' } }))
        .status,
    ).toBe(201);
    await openAddAuthentication('PayPal REST API');
    expect(await page.getByLabel('Method', { exact: true }).locator('option').allTextContents()).toEqual([
      'OAuth 2.0 client credentials (oauth2)',
    ]);
    expect(await page.getByLabel(/^Client secret/).getAttribute('type')).toBe('password');
    expect(await page.getByLabel(/^Token URL/).count()).toBe(1);
    await shot('oauth2-method');
  });

  it('pages through buyers with next and previous', async () => {
    await page.getByRole('link', { name: 'Buyers' }).click();
    await page.getByRole('heading', { name: 'Buyers', level: 1 }).waitFor();
    const names = () => page.locator('main tbody tr td:first-child').allTextContents();
    await page.getByText('Page 1').waitFor();
    const first = await names();
    expect(first).toHaveLength(10);
    expect(first[0]).toBe('Buyer 25');
    await page.getByRole('button', { name: 'Next →' }).click();
    await page.getByText('Page 2').waitFor();
    const second = await names();
    expect(second[0]).toBe('Buyer 15');
    await shot('buyers');
    await page.getByRole('button', { name: 'Next →' }).click();
    await page.getByText('Page 3').waitFor();
    expect(await names()).toEqual(['Buyer 05', 'Buyer 04', 'Buyer 03', 'Buyer 02', 'Buyer 01']);
    expect(await page.getByRole('button', { name: 'Next →' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: '← Previous' }).click();
    await page.getByText('Page 2').waitFor();
    expect(await names()).toEqual(second);
    await page.getByRole('button', { name: '← Previous' }).click();
    await page.getByText('Page 1').waitFor();
    expect(await names()).toEqual(first);
    expect(await page.getByRole('button', { name: '← Previous' }).isDisabled()).toBe(true);

    await page.getByLabel('Search by name or external identifier').fill('Buyer 1');
    await page.keyboard.press('Enter');
    await page.getByText('matching “Buyer 1”').waitFor();
    expect((await names()).every((n) => n.startsWith('Buyer 1'))).toBe(true);
  });

  it('lists the stored cards, newest first, ten a page, never a number', async () => {
    // Eleven more cards: two pages with the one the forward uses.
    const numbers: string[] = [];
    for (let i = 0; i < 11; i++) {
      const number = cardNumber('51', 16);
      numbers.push(number);
      await createCard(t, merchant, { number, expiration_date: `0${(i % 9) + 1}/32` });
    }
    await page.getByRole('link', { name: 'Stored cards' }).click();
    await page.getByRole('heading', { name: 'Stored cards', level: 1 }).waitFor();
    await page.getByText('Page 1').waitFor();
    const cells = (column: number) => page.locator(`main tbody tr td:nth-child(${column})`).allTextContents();
    expect(await cells(1)).toEqual(
      numbers
        .reverse()
        .slice(0, 10)
        .map((n) => `•••• ${n.slice(-4)}`),
    );
    expect(await cells(2)).toEqual(Array(10).fill('mastercard'));
    await shot('stored-cards');
    await page.getByRole('button', { name: 'Next →' }).click();
    await page.getByText('Page 2').waitFor();
    expect(await cells(1)).toEqual([`•••• ${numbers[10].slice(-4)}`, `•••• ${card.number.slice(-4)}`]);
    expect(await cells(3)).toEqual(['01/32', '04/31']);
    expect(await page.getByRole('button', { name: 'Next →' }).isDisabled()).toBe(true);
    const content = await page.content();
    for (const number of [...numbers, card.number]) expect(content).not.toContain(number);
  });

  it('shows activity: the chart by outcome, forward records, and a failed job’s attempts', async () => {
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
    const chart = page.getByTestId('activity-chart');
    await chart.waitFor();
    expect(await chart.locator('rect.bar').count()).toBeGreaterThan(0);
    const legend = await page.locator('#chart-summary').textContent();
    expect(legend).toMatch(/Succeeded \(downstream < 400\): 1/);
    expect(legend).toMatch(/Failed \(service error\): 2/);
    await page.getByLabel('Status').selectOption('failed');
    const jobRow = page.getByRole('row', { name: new RegExp(failedJobId) });
    await jobRow.waitFor();
    expect(await jobRow.textContent()).toContain('failed');
    await jobRow.getByRole('button', { name: /Attempts/ }).click();
    const attempts = page.getByRole('table', { name: new RegExp(`Attempts of job ${failedJobId}`) });
    await attempts.waitFor();
    expect(await attempts.locator('tbody tr').count()).toBe(2);
    expect(await attempts.textContent()).toContain('downstream-unreachable');
    expect(
      await page
        .getByRole('button', { name: /Attempts/ })
        .first()
        .getAttribute('aria-expanded'),
    ).toBe('true');
    const charge = page
      .getByRole('region', { name: 'Forward records' })
      .getByRole('row', { name: /\/charge/ })
      .first();
    await charge.waitFor();
    // Its redacted request and answer (decision 0104): placeholder text where the card number was filled.
    await charge.getByRole('button', { name: /Request and answer of forward/ }).click();
    const detail = page.locator('[data-testid^="record-detail-"]').first();
    await detail.getByText('Request body (as sent)').waitFor();
    expect(await detail.textContent()).toContain('Bodies recorded because this forward’s config asks for them');
    expect(await detail.textContent()).toContain('{"number":"{{ CARD_NUMBER_1 }}"}');
    expect(await detail.textContent()).toContain('{"verified":true}');
    expect(await page.content()).not.toContain(card.number);
    await shot('activity');
  });

  it('refreshes a running job by itself until it ends, then stops refreshing', async () => {
    // A downstream that holds the request until the test lets it answer: the job stays running meanwhile.
    const holding = await startScriptedDownstream();
    holding.script('/hold', [{ hold: true }]);
    const release = () => {
      for (const res of holding.held.splice(0))
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    };
    try {
      const config = await http(t.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Held', hosts: [`127.0.0.1:${holding.port}`] },
      });
      expect(config.status).toBe(201);
      await page.getByLabel('Status').selectOption('');
      const queued = await http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          prefer: 'respond-async',
          'x-vault-forward-url': `${holding.url}/hold`,
          'x-vault-forward-http-method': 'POST',
          'content-type': 'application/json',
        },
        rawBody: '{"amount":2}',
      });
      expect(queued.status).toBe(202);
      const jobId = queued.body.id as string;
      await waitFor(
        async () => (await http(t.url, `/vault-forward/jobs/${jobId}`, { token })).body.status === 'running',
        { timeoutMs: 20_000, what: 'the held job to run' },
      );
      // The page learns of the job once (a filter change fetches), then keeps itself current.
      await page.getByLabel('Status').selectOption('running');
      const row = page.getByRole('row', { name: new RegExp(jobId) });
      await row.waitFor();
      await page.getByText('Refreshing every 2 seconds while a job is queued or running.').waitFor();
      await page.getByLabel('Status').selectOption('');
      await row.waitFor();
      expect(await row.textContent()).toContain('running');
      release();
      // No click from here on: only the page's own refresh can show the end.
      await row.filter({ hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
      await page
        .getByText('Refreshing every 2 seconds while a job is queued or running.')
        .waitFor({ state: 'detached' });
    } finally {
      release();
      await holding.close();
    }
  });

  it('with an instance key: Settings → Merchants → edit → Vault Forwarding, keyboard only', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.getByLabel('API key file (PEM)').setInputFiles(instanceKeyFile);
    await page.getByLabel('API key file (PEM)').focus();
    // Scopes field, then the button: Enter on the focused button submits.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Merchants', level: 1 }).waitFor();
    await shot('merchants');
    // Focus is visible: the focused control gets an outline.
    await page.keyboard.press('Tab');
    const outline = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle');
    expect(outline).not.toBe('none');
    await page.goto(`${t.url}/dashboard/#/merchants/${merchant}`);
    await page.reload();
    // A reload is a new tab state: the key is gone, so it is sign-in again.
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.getByLabel('API key file (PEM)').setInputFiles(instanceKeyFile);
    await page.getByRole('button', { name: 'Sign in with key' }).click();
    await page.getByRole('heading', { name: 'Merchants', level: 1 }).waitFor();
    const editLink = page.getByRole('link', { name: 'Edit Dashboard Shop' });
    // Other suites add merchants to the shared database, so this one may be pages down. The rows load
    // after the heading, and Lit reuses a row's link for the row that replaces it: look only at a settled
    // page, or a click meant for "Edit Dashboard Shop" lands on whichever merchant took its place.
    const firstRowId = () => page.locator('main tbody tr code').first().textContent();
    await page.getByRole('navigation', { name: 'Merchant accounts pages' }).waitFor();
    while (!(await editLink.count())) {
      const shown = await firstRowId();
      await page.getByRole('button', { name: 'Next →' }).click();
      await waitFor(async () => (await firstRowId()) !== shown, { what: 'the next page of merchants' });
    }
    await editLink.click();
    await page.getByRole('heading', { name: 'Dashboard Shop', level: 1 }).waitFor();
    await page.getByLabel('Display name').fill('Dashboard Shop (EU)');
    // Secure Fields origins, one per line: a path is refused beside the field, then a fixed list is saved normalised.
    const origins = page.getByLabel('Secure Fields origins');
    await origins.fill('https://shop.example/checkout');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#merchant-origins-error').waitFor();
    expect(await origins.getAttribute('aria-invalid')).toBe('true');
    await origins.fill('https://Shop.Example:443\nhttp://shop.localhost:8123');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Dashboard Shop (EU)', level: 1 }).waitFor();
    await waitFor(async () => (await origins.inputValue()) === 'https://shop.example\nhttp://shop.localhost:8123', {
      what: 'the saved origins shown normalised',
    });
    const saved = (await http(t.url, `/merchant-accounts/${merchant}`, { token: await instanceToken() })).body;
    expect(saved.display_name).toBe('Dashboard Shop (EU)');
    expect(saved.secure_fields_origins).toEqual(['https://shop.example', 'http://shop.localhost:8123']);
    await page.getByRole('link', { name: 'Vault Forwarding' }).click();
    await page.getByRole('row', { name: /Acme PSP/ }).waitFor();
  });

  it('logged no console errors and no CSP violations; the browser does enforce the policy', async () => {
    expect(violations).toEqual([]);
    expect(consoleErrors).toEqual([]);
    // The same watchers see an inline script being refused, so the empty lists above mean something.
    const ran = await page.evaluate(
      `(() => { const s = document.createElement('script'); s.textContent = 'window.inlineRan = true'; ` +
        `document.head.appendChild(s); return window.inlineRan === true; })()`,
    );
    expect(ran).toBe(false);
    await waitFor(async () => violations.length > 0, { what: 'the CSP violation report' });
    expect(violations[0]).toMatch(/^script-src/);
    expect(consoleErrors.some((e) => e.includes('Content Security Policy'))).toBe(true);
  });
});
