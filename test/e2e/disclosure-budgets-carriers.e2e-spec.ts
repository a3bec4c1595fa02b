import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { REDIS } from '../../src/platform/redis/redis';
import { cardNumber, storeCard } from '../factories/cards';
import { createCheckoutSession } from '../factories/checkout-sessions';
import { createMerchantWithConfig, MerchantWithToken } from '../factories/forwarding-merchants';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http, HttpResult } from '../support/http';
import { PrivateRedis } from '../support/private-redis';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * A window length whose current window has ten minutes left at least (windows are aligned to their length, and a
 * budget may have any length up to a day): no test here sees its window end, whatever the time of day.
 */
function roomyWindowSeconds(): number {
  const nowSeconds = Math.floor(Date.now() / 1000);
  let seconds = 86_400;
  while (seconds - (nowSeconds % seconds) < 600) seconds--;
  return seconds;
}

/**
 * Decision 0142 (issue 47, item 1): a per-card budget counts the card, by its fingerprint, whichever carrier brings
 * it (a stored payment method, another stored copy of it, a network token of it, a checkout session holding it, a
 * checkout session naming a stored copy), and a window's count outlives Redis losing its data. The Redis is the
 * test's own redis-server, so flushing, killing and restarting it touches nothing else.
 */
describe('Disclosure budgets count the card, whatever carries it (issue 47; decision 0142)', () => {
  let redis: PrivateRedis;
  let target: Downstream;
  let t: TestApp;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    target = await startHttpDownstream();
    t = await startTestApp({ env: { REDIS_URL: redis.url, FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
  });
  afterAll(async () => {
    await t?.close();
    await target?.close();
    await redis?.kill();
  });

  const reached = (path: string) => target.received.filter((r) => r.url === path).length;

  /** A forward to `path` of the target, its cards named by `carrier` (one header), filling `body`. */
  function forward(merchant: MerchantWithToken, path: string, carrier: Record<string, string>, body: string) {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token: merchant.token,
      headers: {
        'x-vault-forward-url': `${target.url}${path}`,
        'x-vault-forward-http-method': 'POST',
        'content-type': 'application/json',
        ...carrier,
      },
      rawBody: body,
    });
  }

  async function setPerCardBudget(merchant: MerchantWithToken, perCard: number): Promise<void> {
    const put = await http(t.url, '/vault-forward/budget', {
      method: 'PUT',
      token: merchant.token,
      body: { disclosures_per_card: perCard, window_seconds: roomyWindowSeconds() },
    });
    expect(put.status).toBe(200);
  }

  /** The disclosures PostgreSQL holds for the merchant's window (read from the table, not through the service). */
  async function durableCount(merchantId: string): Promise<number> {
    const [row] = await t.db.query<Array<{ total: number }>>(
      `SELECT coalesce(sum(disclosures), 0)::int AS total FROM vault_forward_disclosure_counts
        WHERE merchant_account_id = $1 AND scope = 'merchant'`,
      [merchantId],
    );
    return row.total;
  }

  const refused = (result: HttpResult) => expectProblem(result, 429, 'disclosure-budget-exceeded');

  it('refuses one card at its per-card limit through every carrier of it', async () => {
    const merchant = await createMerchantWithConfig(t, target.port, 'Carriers');
    const number = cardNumber();
    const stored = await storeCard(t, merchant.id, { number });
    const copy = await storeCard(t, merchant.id, { number });
    const token = await http(t.url, `/payment-methods/${copy.id}/network-tokens`, {
      method: 'POST',
      token: merchant.token,
      body: { token: cardNumber('4895', 16), expiration_date: '07/29' },
    });
    expect(token.status).toBe(201);
    const holding = await createCheckoutSession(t, merchant.token, {
      card: { number, expiration_date: '12/30', security_code: '123' },
    });
    const naming = await createCheckoutSession(t, merchant.token);
    const fields = await http(t.url, `/checkout/sessions/${naming.id}/fields`, {
      method: 'PUT',
      token: merchant.token,
      body: { payment_method: { method: 'id', id: stored.id, security_code: '123' } },
    });
    expect(fields.status).toBe(200);
    const other = await storeCard(t, merchant.id);

    const number1 = '{"number":"{{ CARD_NUMBER_1 }}"}';
    const carriers: Array<[string, Record<string, string>, string]> = [
      ['a stored payment method', { 'x-vault-forward-payment-methods': stored.id }, number1],
      ['another stored copy of the card', { 'x-vault-forward-payment-methods': copy.id }, number1],
      [
        'a network token of the card',
        { 'x-vault-forward-payment-methods': copy.id },
        '{"token":"{{ CARD_NETWORK_TOKEN_1 }}"}',
      ],
      ['a checkout session holding the card', { 'x-vault-forward-checkout-session': holding.id }, number1],
      ['a checkout session naming a stored copy', { 'x-vault-forward-checkout-session': naming.id }, number1],
    ];
    await setPerCardBudget(merchant, carriers.length);
    const path = `/carriers/${randomUUID()}`;
    for (const [what, carrier, body] of carriers) {
      const result = await forward(merchant, path, carrier, body);
      expect([what, result.status]).toEqual([what, 200]);
    }
    // The card has had its budget: no carrier of it gets it out again, and nothing more reaches the target.
    for (const [what, carrier, body] of carriers) {
      const result = await forward(merchant, path, carrier, body);
      expect([what, result.status]).toEqual([what, 429]);
      refused(result);
    }
    expect(reached(path)).toBe(carriers.length);
    // Another card of the merchant still goes.
    expect((await forward(merchant, path, { 'x-vault-forward-payment-methods': other.id }, number1)).status).toBe(200);
  });

  describe('a window’s count outlives Redis losing its data', () => {
    /** Waits for the app's Redis connection to be ready again after a restart. */
    const redisBack = () =>
      waitFor(() => t.get<Redis>(REDIS).status === 'ready', {
        timeoutMs: 20_000,
        what: 'the app to reconnect to Redis',
      });

    it('a card at its limit stays refused after Redis is flushed, and after it restarts empty', async () => {
      const merchant = await createMerchantWithConfig(t, target.port, 'Flushed');
      const card = await storeCard(t, merchant.id);
      await setPerCardBudget(merchant, 3);
      const path = `/flushed/${randomUUID()}`;
      const send = () =>
        forward(merchant, path, { 'x-vault-forward-payment-methods': card.id }, '{"n":"{{ CARD_NUMBER_1 }}"}');
      for (let i = 0; i < 3; i++) expect((await send()).status).toBe(200);
      await waitFor(async () => (await durableCount(merchant.id)) === 3, { what: 'the durable count to reach 3' });

      const admin = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await admin.connect();
        await admin.flushall();
      } finally {
        admin.disconnect();
      }
      refused(await send());

      await redis.kill();
      await redis.restart();
      await redisBack();
      refused(await send());
      refused(await send());
      expect(reached(path)).toBe(3);
    });

    it('counts made in PostgreSQL while Redis is away and those made in Redis before are one count', async () => {
      const merchant = await createMerchantWithConfig(t, target.port, 'Outage');
      const card = await storeCard(t, merchant.id);
      await setPerCardBudget(merchant, 4);
      const path = `/outage/${randomUUID()}`;
      const send = () =>
        forward(merchant, path, { 'x-vault-forward-payment-methods': card.id }, '{"n":"{{ CARD_NUMBER_1 }}"}');
      await redisBack();
      for (let i = 0; i < 2; i++) expect((await send()).status).toBe(200);
      await waitFor(async () => (await durableCount(merchant.id)) === 2, { what: 'the durable count to reach 2' });

      // Redis away (and its data with it): counted in PostgreSQL, against the two Redis counted.
      await redis.kill();
      for (let i = 0; i < 2; i++) expect((await send()).status).toBe(200);
      refused(await send());

      await redis.restart();
      await redisBack();
      refused(await send());
      expect(reached(path)).toBe(4);
    });
  });

  describe('a Redis that comes back with its data', () => {
    let kept: PrivateRedis;
    let k: TestApp;

    beforeAll(async () => {
      kept = await PrivateRedis.start({ aof: true });
      k = await startTestApp({ env: { REDIS_URL: kept.url, FORWARD_INSECURE_HOSTS: '127.0.0.1' } });
    });
    afterAll(async () => {
      await k?.close();
      await kept?.kill();
    });

    it('does not go on from its count before the outage: what PostgreSQL counted meanwhile is counted', async () => {
      const merchant = await createMerchantWithConfig(k, target.port, 'Kept');
      const card = await storeCard(k, merchant.id);
      const put = await http(k.url, '/vault-forward/budget', {
        method: 'PUT',
        token: merchant.token,
        body: { disclosures_per_card: 4, window_seconds: roomyWindowSeconds() },
      });
      expect(put.status).toBe(200);
      const path = `/kept/${randomUUID()}`;
      const send = () =>
        http(k.url, '/vault-forward', {
          method: 'POST',
          token: merchant.token,
          headers: {
            'x-vault-forward-url': `${target.url}${path}`,
            'x-vault-forward-http-method': 'POST',
            'x-vault-forward-payment-methods': card.id,
            'content-type': 'application/json',
          },
          rawBody: '{"n":"{{ CARD_NUMBER_1 }}"}',
        });
      for (let i = 0; i < 2; i++) expect((await send()).status).toBe(200);
      await waitFor(async () => (await durableCount(merchant.id)) === 2, { what: 'the durable count to reach 2' });

      // Away (its append-only file keeps the count of 2): two more are counted in PostgreSQL.
      await kept.kill();
      for (let i = 0; i < 2; i++) expect((await send()).status).toBe(200);
      await kept.restart();
      await waitFor(() => k.get<Redis>(REDIS).status === 'ready', {
        timeoutMs: 20_000,
        what: 'the app to reconnect to Redis',
      });
      refused(await send());
      expect(reached(path)).toBe(4);
    });
  });
});
