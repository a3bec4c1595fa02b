import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { launchChromium } from '../support/chromium';
import { http } from '../support/http';
import { testDataDir, testTempDir } from '../support/temp-data-dir';
import { startTestApp, TEST_MASTER_KEY_1, TestApp } from '../support/test-app';

/**
 * Issue 50's dashboard page and CLI command for inbound routes: each creates, lists and deletes a route through
 * the same service as the API, and shows no secret. Run on the built bundle and CLI (`npm run build`).
 */
describe('Inbound routes in the dashboard and the CLI', () => {
  let t: TestApp;
  let merchant: string;
  let token: string;
  let keyFile: string;
  let browser: Browser;
  let page: Page;
  const SECRET = 'dashboard-partner-secret-0123456789';
  const UPSTREAM_TOKEN = 'Bearer dashboard-upstream-token-0123456789';

  function cli(input: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        ['dist/cli/main.js', ...args],
        {
          env: {
            PATH: process.env.PATH,
            DATA_DIR: testDataDir(),
            DATABASE_URL: process.env.TEST_DATABASE_URL!,
            VAULT_MASTER_KEYS: TEST_MASTER_KEY_1,
          },
          timeout: 60_000,
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
      child.stdin!.end(input);
    });
  }

  beforeAll(async () => {
    t = await startTestApp();
    merchant = (await createMerchantAccount(t)).id;
    const key = await createApiKey(t, merchant);
    token = await key.token();
    keyFile = join(testTempDir('vf-inbound-ui-'), 'merchant.pem');
    writeFileSync(keyFile, key.privateKeyPem, { mode: 0o600 });
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('the dashboard lists, creates and deletes a route, the secret never shown', async () => {
    await page.goto(`${t.url}/dashboard`);
    await page.getByLabel('API key file (PEM)').setInputFiles(keyFile);
    await page.getByRole('button', { name: 'Sign in with key' }).click();
    await page.getByRole('link', { name: 'Inbound routes' }).click();
    await page.getByRole('heading', { name: 'Inbound routes', level: 1 }).waitFor();
    await page.getByText('No inbound routes yet.').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Travel partner');
    await page.getByLabel('Upstream URL (https)').fill('https://merchant.example/bookings');
    await page.getByLabel('Header', { exact: true }).fill('x-partner-key');
    await page.getByLabel(/^Secret/).fill(SECRET);
    await page.getByLabel(/^Upstream headers/).fill(`Authorization: ${UPSTREAM_TOKEN}\nX-Merchant-Route: bookings`);
    await page.getByLabel(/Record bodies/).check();
    await page.getByLabel(/^Keep them/).fill('3');
    await page.getByRole('button', { name: 'Create' }).click();
    const row = page.getByRole('row', { name: /Travel partner/ });
    await row.waitFor();
    await row.getByText('shared-secret · x-partner-key').waitFor();
    await row.getByText('authorization, x-merchant-route').waitFor();
    await row.getByText('Recorded, kept 3 days').waitFor();
    for (const secret of [SECRET, UPSTREAM_TOKEN]) expect(await page.content()).not.toContain(secret);
    const listed = await http(t.url, '/vault-forward/inbound-routes', { token });
    expect(listed.body.items.map((r: { display_name: string }) => r.display_name)).toEqual(['Travel partner']);
    expect(listed.body.items[0]).toMatchObject({
      upstream_headers: [{ name: 'authorization' }, { name: 'x-merchant-route' }],
      record_bodies: true,
      record_bodies_retention_days: 3,
    });

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No inbound routes yet.').waitFor();
    expect((await http(t.url, '/vault-forward/inbound-routes', { token })).body.items).toEqual([]);
  });

  it('the CLI creates from stdin, lists and deletes a route; a refused body names the field', async () => {
    const body = JSON.stringify({
      display_name: 'From the CLI',
      upstream_url: 'https://merchant.example/in',
      caller_authentication: { kind: 'shared-secret', header: 'x-partner-key', secret: SECRET },
      upstream_headers: [{ name: 'Authorization', value: UPSTREAM_TOKEN }],
      record_bodies: true,
    });
    const created = await cli(body, 'inbound-route', 'create', '--merchant', merchant, '--json', '-');
    expect(created).toMatchObject({ code: 0 });
    for (const secret of [SECRET, UPSTREAM_TOKEN]) expect(created.stdout).not.toContain(secret);
    const route = JSON.parse(created.stdout) as { id: string; caller_authentication: unknown };
    expect(route).toMatchObject({
      caller_authentication: { kind: 'shared-secret', header: 'x-partner-key' },
      upstream_headers: [{ name: 'authorization' }],
      record_bodies: true,
    });
    const listed = await cli('', 'inbound-route', 'list', '--merchant', merchant);
    expect(JSON.parse(listed.stdout).items.map((r: { id: string }) => r.id)).toEqual([route.id]);
    expect((await http(t.url, `/vault-forward/inbound-routes/${route.id}`, { token })).status).toBe(200);

    const refused = await cli(
      JSON.stringify({ ...JSON.parse(body), upstream_url: 'https://10.1.2.3/in' }),
      'inbound-route',
      'create',
      '--merchant',
      merchant,
      '--json',
      '-',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('upstream_url');
    for (const secret of [SECRET, UPSTREAM_TOKEN]) expect(refused.stderr).not.toContain(secret);

    const deleted = await cli('', 'inbound-route', 'delete', '--merchant', merchant, '--id', route.id);
    expect(JSON.parse(deleted.stdout)).toEqual({ id: route.id, deleted: true });
    expect((await http(t.url, `/vault-forward/inbound-routes/${route.id}`, { token })).status).toBe(404);
  });
});
