import { ChildProcess, spawn } from 'node:child_process';
import { launchChromium } from '../support/chromium';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

const EXAMPLE = join(__dirname, '../../examples/secure-fields-shop/shop.js');
const NUMBER = '4111111111111111';
const CODE = '737';

/**
 * The example merchant shop the README runs (examples/secure-fields-shop/shop.js), as it is: its server creates a
 * session, its page collects a card through the unmodified library into the vault's frames, its server forwards with
 * x-vault-forward-checkout-session, and the provider gets the card while the shop never had it.
 */
describe('the Secure Fields example shop runs as the README says', () => {
  let t: TestApp;
  let provider: Downstream;
  let shop: ChildProcess;
  let shopOutput = '';
  let shopOrigin: string;
  let browser: Browser;

  beforeAll(async () => {
    provider = await startHttpDownstream();
    t = await startTestApp({ env: { FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    const merchant = await createMerchantAccount(t);
    const token = await (await createApiKey(t, merchant.id)).token();
    const config = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Provider', hosts: [`127.0.0.1:${provider.port}`], unmatched_pan: 'mask' },
    });
    expect(config.status).toBe(201);
    shop = spawn(process.execPath, [EXAMPLE], {
      env: {
        PATH: process.env.PATH,
        TOKEN: token,
        API: t.url,
        SECURE_FIELDS_ORIGIN: `http://secure-fields.localhost:${new URL(t.url).port}`,
        TARGET: `${provider.url}/payments`,
        SHOP_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    shop.stdout!.on('data', (chunk: Buffer) => (shopOutput += chunk.toString('utf8')));
    shop.stderr!.on('data', (chunk: Buffer) => (shopOutput += chunk.toString('utf8')));
    shopOrigin = (
      await waitFor(() => /shop on (http:\/\/shop\.localhost:\d+)/.exec(shopOutput), { what: 'the shop to listen' })
    )[1];
    // The merchant lists its shop's origin (README: merchant update --secure-fields-origin).
    const instance = await createApiKey(t, null, 'ES256');
    const listed = await http(t.url, `/merchant-accounts/${merchant.id}`, {
      method: 'PUT',
      token: await instance.token(),
      body: { secure_fields_origins: [shopOrigin] },
    });
    expect(listed.status).toBe(200);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    shop?.kill('SIGTERM');
    await t?.close();
    await provider?.close();
  });

  it('collects a card in the frames and pays: the provider gets it, the shop’s page and server never do', async () => {
    const page = await browser.newPage();
    const shopRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(shopOrigin)) shopRequests.push(`${request.url()} ${request.postData() ?? ''}`);
    });
    await page.goto(`${shopOrigin}/`);
    await page.frameLocator('iframe#number').locator('input').pressSequentially(NUMBER);
    await page.frameLocator('iframe#expiryDate').locator('input').pressSequentially('1231');
    await page.frameLocator('iframe#securityCode').locator('input').pressSequentially(CODE);
    await page.locator('#pay:not([disabled])').click();
    await waitFor(async () => (await page.locator('#status').textContent()) === 'Paid', {
      timeoutMs: 20_000,
      what: `the page to say Paid (shop: ${shopOutput})`,
    });
    const [payment] = provider.received.filter((r) => r.url === '/payments');
    expect(JSON.parse(payment.body.toString('utf8'))).toMatchObject({
      card: { number: NUMBER, expiry: '12/31', cvv: CODE },
    });
    // The shop's page and every request its origin received: no number, no code.
    const html = await page.content();
    expect(html).not.toContain(NUMBER);
    for (const request of shopRequests) expect(request).not.toMatch(new RegExp(`${NUMBER}|"${CODE}"`));
    expect(shopOutput).not.toContain(NUMBER);
    expect(shopOutput).toMatch(/forwarded for session [0-9a-f-]+: 200/);
    await page.close();
  });
});
