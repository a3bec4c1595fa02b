import { createHmac, randomUUID } from 'node:crypto';
import { NoWebhookSecretError, WebhookSigner } from '../../src/modules/merchants/webhook-secrets/webhook-signer';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { http } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/** HMAC-SHA256 of `id.timestamp.body` under the bytes of a `whsec_` secret, as the specification says. */
function v1(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * WebhookSigner against the real database (issue 19, mutation audit): what it refuses to sign, the
 * exact headers, which secrets sign and in which order.
 */
describe('WebhookSigner', () => {
  let t: TestApp;
  const signer = () => t.get(WebhookSigner);
  /** A merchant account of its own per test, so each test passes alone and in any order. */
  async function merchantWith(secrets: number): Promise<{ id: string; secrets: string[] }> {
    const id = (await createMerchantAccount(t)).id;
    const token = await (await createApiKey(t, id)).token();
    const made: string[] = [];
    for (let i = 0; i < secrets; i++)
      made.push((await http(t.url, '/vault-forward/webhook-secrets', { method: 'POST', token })).body.secret as string);
    return { id, secrets: made };
  }

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('without a secret that signs now: NoWebhookSecretError, whatever another merchant has', async () => {
    await merchantWith(1);
    const without = await merchantWith(0);
    const failure = await signer()
      .signWebhook(without.id, { id: 'msg_1', timestamp: 1, body: '{}' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NoWebhookSecretError);
    expect(failure).toMatchObject({
      name: 'NoWebhookSecretError',
      message: 'the merchant account has no webhook signing secret (POST /vault-forward/webhook-secrets)',
    });
  });

  it('signs id.timestamp.body with the secret’s bytes; a string and a Buffer body sign alike', async () => {
    const {
      id: merchant,
      secrets: [secret],
    } = await merchantWith(1);
    const id = `msg_${randomUUID().replace(/-/g, '')}`;
    const body = '{"status":"succeeded","é":1}';
    const headers = await signer().signWebhook(merchant, { id, timestamp: 1_800_000_000, body });
    expect(headers).toEqual({
      'webhook-id': id,
      'webhook-timestamp': '1800000000',
      'webhook-signature': v1(secret, id, 1_800_000_000, body),
    });
    expect(await signer().signWebhook(merchant, { id, timestamp: 1_800_000_000, body: Buffer.from(body) })).toEqual(
      headers,
    );
    // Timestamp 0 and an id of 100 characters are the edges of what is signed.
    const longest = 'a'.repeat(100);
    expect((await signer().signWebhook(merchant, { id: longest, timestamp: 0, body }))['webhook-signature']).toBe(
      v1(secret, longest, 0, body),
    );
  });

  it('refuses a timestamp that is not whole non-negative Unix seconds, and an id that could blur the signed content', async () => {
    const merchant = (await merchantWith(1)).id;
    for (const timestamp of [-1, 1.5, 2 ** 53, Number.NaN])
      await expect(signer().signWebhook(merchant, { id: 'msg_1', timestamp, body: '{}' })).rejects.toThrow(
        'webhook timestamp must be whole Unix seconds',
      );
    for (const id of ['', 'a.b', 'a b', 'a'.repeat(101), 'é', 'msg_1\n'])
      await expect(signer().signWebhook(merchant, { id, timestamp: 1, body: '{}' })).rejects.toThrow(
        'webhook id must be 1–100 letters, digits, - or _',
      );
    expect((await signer().signWebhook(merchant, { id: 'Az09_-', timestamp: 1, body: '{}' }))['webhook-id']).toBe(
      'Az09_-',
    );
  });

  it('during a rotation the current secret signs first, the previous one second; once it expires, only the current', async () => {
    const {
      id: other,
      secrets: [first, second],
    } = await merchantWith(2);
    const message = { id: 'msg_rotation', timestamp: 1_800_000_001, body: '{"n":1}' };
    const signed = await signer().signWebhook(other, message);
    expect(signed['webhook-signature']).toBe(
      `${v1(second, message.id, message.timestamp, message.body)} ${v1(first, message.id, message.timestamp, message.body)}`,
    );
    await t.db.query(
      `UPDATE vault_forward_webhook_secrets SET expires_at = now() - interval '1 second'
        WHERE merchant_account_id = $1 AND expires_at IS NOT NULL`,
      [other],
    );
    expect((await signer().signWebhook(other, message))['webhook-signature']).toBe(
      v1(second, message.id, message.timestamp, message.body),
    );
  });
});
