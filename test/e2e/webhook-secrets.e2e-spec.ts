import { execFile } from 'node:child_process';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { KeyRotationService } from '../../src/modules/vault/key-rotation.service';
import { NoWebhookSecretError, WebhookSigner } from '../../src/modules/merchants/webhook-secrets/webhook-signer';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { expectProblem, http } from '../support/http';
import { createIsolatedDatabase } from '../support/isolated-database';
import { startTestApp, TEST_MASTER_KEY_1, TEST_MASTER_KEY_2, TestApp } from '../support/test-app';

const run = promisify(execFile);

/**
 * A verifier written from the Standard Webhooks specification alone, sharing no code with the
 * service: the signed content is `${webhook-id}.${webhook-timestamp}.${body}`, the key is the base64
 * after `whsec_`, the header lists space-separated `v1,<base64 HMAC-SHA256>` of which one must match
 * (compared in constant time), and a timestamp more than 5 minutes away from now is refused.
 */
function verifyStandardWebhook(
  secret: string,
  headers: Record<string, string>,
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  if (!secret.startsWith('whsec_')) throw new Error('not a Standard Webhooks secret');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  if (!id || !/^\d+$/.test(timestamp ?? '')) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > 5 * 60) return false;
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return (headers['webhook-signature'] ?? '').split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

describe('Webhook signing secrets (issue 11, item 5: resource and signer)', () => {
  let t: TestApp;
  let merchant: string;
  let token: string;
  const apps: TestApp[] = [];
  const secretsSeen: string[] = [];

  const create = (tok = token) => http(t.url, '/vault-forward/webhook-secrets', { method: 'POST', token: tok });
  const list = (tok = token, query = '') => http(t.url, `/vault-forward/webhook-secrets${query}`, { token: tok });
  const sign = (m: string, body: string, id = `msg_${randomUUID().replace(/-/g, '')}`, app = t) =>
    app.get(WebhookSigner).signWebhook(m, { id, timestamp: Math.floor(Date.now() / 1000), body });

  beforeAll(async () => {
    t = await startTestApp();
    apps.push(t);
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
  });
  // After each test, not in a last test of its own: a test run alone or in another order checks
  // the logs it wrote against the secrets it was shown.
  afterEach(() => {
    expect(t.logs.text.length).toBeGreaterThan(0);
    for (const app of apps) for (const secret of secretsSeen) expect(app.logs.text).not.toContain(secret.slice(6));
  });

  it('creates a secret, shows it once, and lists it without it', async () => {
    const created = await create();
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      type: 'vault-forward-webhook-secret',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'active',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
      expires_at: null,
    });
    const secret = created.body.secret as string;
    secretsSeen.push(secret);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);

    const listed = await list();
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ limit: 20, next_cursor: null, previous_cursor: null });
    const { secret: _shownOnce, ...withoutSecret } = created.body;
    expect(listed.body.items).toEqual([withoutSecret]);
    expect(listed.text).not.toContain(secret.slice(6));

    const headers = await sign(merchant, '{"type":"vault-forward-job"}');
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifyStandardWebhook(secret, headers, '{"type":"vault-forward-job"}')).toBe(true);
    // The verifier can say no: another body, a stale timestamp, another secret.
    expect(verifyStandardWebhook(secret, headers, '{"type":"vault-forward-job "}')).toBe(false);
    expect(
      verifyStandardWebhook(
        secret,
        headers,
        '{"type":"vault-forward-job"}',
        Number(headers['webhook-timestamp']) + 301,
      ),
    ).toBe(false);
    expect(
      verifyStandardWebhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, headers, '{"type":"vault-forward-job"}'),
    ).toBe(false);
  });

  it('rotation: the previous secret signs beside the new one for 24 hours, then stops', async () => {
    const m = (await createMerchantAccount(t)).id;
    const tok = await (await createApiKey(t, m)).token();
    await expect(sign(m, 'x')).rejects.toBeInstanceOf(NoWebhookSecretError);
    const first = (await create(tok)).body;
    const second = (await create(tok)).body;
    secretsSeen.push(first.secret, second.secret);
    expect(second.secret).not.toBe(first.secret);

    const items = (await list(tok)).body.items as Array<Record<string, unknown>>;
    expect(items.map((i) => [i.id, i.status])).toEqual([
      [second.id, 'active'],
      [first.id, 'rotated'],
    ]);
    const expiresAt = Date.parse(items[1].expires_at as string);
    expect(Math.abs(expiresAt - (Date.now() + 24 * 3600_000))).toBeLessThan(60_000);

    const body = JSON.stringify({ id: randomUUID(), status: 'succeeded' });
    const during = await sign(m, body);
    expect(during['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyStandardWebhook(second.secret, during, body)).toBe(true);
    expect(verifyStandardWebhook(first.secret, during, body)).toBe(true);
    // The current secret signs first.
    expect(
      verifyStandardWebhook(
        second.secret,
        { ...during, 'webhook-signature': during['webhook-signature'].split(' ')[0] },
        body,
      ),
    ).toBe(true);

    // 24 hours later (moved in SQL): only the new secret signs.
    await t.db.query(
      `UPDATE vault_forward_webhook_secrets SET rotated_at = rotated_at - interval '24 hours', expires_at = ` +
        `expires_at - interval '24 hours' WHERE id = $1`,
      [first.id],
    );
    const after = await sign(m, body);
    expect(after['webhook-signature'].split(' ')).toHaveLength(1);
    expect(verifyStandardWebhook(second.secret, after, body)).toBe(true);
    expect(verifyStandardWebhook(first.secret, after, body)).toBe(false);
    expect(((await list(tok)).body.items as Array<Record<string, unknown>>).map((i) => i.status)).toEqual([
      'active',
      'expired',
    ]);

    // A third rotates the second; the first stays expired.
    const third = (await create(tok)).body;
    secretsSeen.push(third.secret);
    const now = await sign(m, body);
    expect(now['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyStandardWebhook(third.secret, now, body) && verifyStandardWebhook(second.secret, now, body)).toBe(
      true,
    );
    expect(verifyStandardWebhook(first.secret, now, body)).toBe(false);
  });

  it('concurrent creations leave exactly one active secret', async () => {
    const m = (await createMerchantAccount(t)).id;
    const tok = await (await createApiKey(t, m)).token();
    const made = await Promise.all(Array.from({ length: 5 }, () => create(tok)));
    expect(made.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    secretsSeen.push(...made.map((r) => r.body.secret as string));
    const statuses = ((await list(tok)).body.items as Array<{ status: string }>).map((i) => i.status).sort();
    expect(statuses).toEqual(['active', 'rotated', 'rotated', 'rotated', 'rotated']);
  });

  it('another merchant account sees none of them, and its signatures use its own secret', async () => {
    const other = (await createMerchantAccount(t)).id;
    const otherToken = await (await createApiKey(t, other)).token();
    expect((await list(otherToken)).body.items).toEqual([]);
    await expect(sign(other, 'x')).rejects.toBeInstanceOf(NoWebhookSecretError);
    const own = (await create(otherToken)).body;
    secretsSeen.push(own.secret);
    expect((await list(otherToken)).body.items.map((i: { id: string }) => i.id)).toEqual([own.id]);
    const headers = await sign(other, 'hello');
    expect(verifyStandardWebhook(own.secret, headers, 'hello')).toBe(true);
    for (const secret of secretsSeen.slice(0, -1)) expect(verifyStandardWebhook(secret, headers, 'hello')).toBe(false);
    // A sealed secret copied onto the other merchant's row does not open there (the AAD binds merchant and id).
    await t.db.query(
      `UPDATE vault_forward_webhook_secrets t SET ciphertext = s.ciphertext, wrapped_key = s.wrapped_key
         FROM vault_forward_webhook_secrets s WHERE s.merchant_account_id = $1 AND s.rotated_at IS NULL AND t.id = $2`,
      [merchant, own.id],
    );
    await expect(sign(other, 'hello')).rejects.toThrow(/webhook secret/);
  });

  it('scopes: listing needs vault-forwards.read, creating vault-forwards.write', async () => {
    const key = await createApiKey(t, merchant);
    const readOnly = await key.token(['vault-forwards.read']);
    expect((await list(readOnly)).status).toBe(200);
    expectProblem(await create(readOnly), 403, 'forbidden');
    const writeOnly = await key.token(['vault-forwards.write']);
    expectProblem(await list(writeOnly), 403, 'forbidden');
    const doc = (await http(t.url, '/openapi.json')).body;
    expect(doc.paths['/vault-forward/webhook-secrets'].post['x-required-scope']).toBe('vault-forwards.write');
    expect(doc.paths['/vault-forward/webhook-secrets'].get['x-required-scope']).toBe('vault-forwards.read');
  });

  it('raw rows and a pg_dump of the table hold no secret', async () => {
    expect(secretsSeen.length).toBeGreaterThan(5);
    const rows = JSON.stringify(
      await t.db.query(
        `SELECT *, encode(ciphertext, 'escape') AS c, encode(ciphertext, 'base64') AS b FROM vault_forward_webhook_secrets`,
      ),
    );
    const database = process.env.TEST_DATABASE_NAME ?? new URL(process.env.TEST_DATABASE_URL!).pathname.slice(1);
    const dump = (
      await run(
        'pg_dump',
        ['-h', '127.0.0.1', '-U', 'postgres', '--data-only', '-t', 'vault_forward_webhook_secrets', database],
        { maxBuffer: 64 * 1024 * 1024 },
      )
    ).stdout;
    expect(dump).toContain('COPY public.vault_forward_webhook_secrets');
    for (const secret of secretsSeen) {
      const key = Buffer.from(secret.slice(6), 'base64');
      for (const text of [rows, dump]) {
        expect(text).not.toContain(secret.slice(6));
        expect(text).not.toContain(key.toString('hex'));
      }
    }
  });

  it('vault rotate-keys re-wraps them; they sign with the new master key alone', async () => {
    const own = await createIsolatedDatabase('rotate_webhook_secrets');
    const old = await startTestApp({ env: { DATABASE_URL: own.url } });
    apps.push(old);
    const m = (await createMerchantAccount(old)).id;
    const tok = await (await createApiKey(old, m)).token();
    const made = (await http(old.url, '/vault-forward/webhook-secrets', { method: 'POST', token: tok })).body;
    secretsSeen.push(made.secret);
    const both = await startTestApp({
      env: { DATABASE_URL: own.url, VAULT_MASTER_KEYS: `${TEST_MASTER_KEY_2},${TEST_MASTER_KEY_1}` },
    });
    apps.push(both);
    expect(await both.get(KeyRotationService).rotate(10)).toMatchObject({
      master_key_id: 'test-k2',
      rewrapped_webhook_secrets: 1,
      failed_webhook_secrets: [],
      remaining: 0,
    });
    const onlyNew = await startTestApp({ env: { DATABASE_URL: own.url, VAULT_MASTER_KEYS: TEST_MASTER_KEY_2 } });
    apps.push(onlyNew);
    const headers = await sign(m, 'rotated', undefined, onlyNew);
    expect(verifyStandardWebhook(made.secret, headers, 'rotated')).toBe(true);
    for (const app of [old, both, onlyNew]) await app.close();
    apps.splice(apps.indexOf(old), 3);
    for (const app of [old, both, onlyNew])
      for (const secret of secretsSeen) expect(app.logs.text).not.toContain(secret.slice(6));
    await own.drop();
  });
});
