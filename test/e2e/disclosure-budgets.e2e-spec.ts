import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WorkerModule } from '../../src/app/worker.module';
import { DisclosureCounter } from '../../src/modules/forwarding/budgets/disclosure-counter';
import {
  CountedScope,
  DisclosureCountsRepository,
} from '../../src/modules/forwarding/budgets/disclosure-counts.repository';
import { Metrics } from '../../src/platform/metrics/metrics.service';
import { deserializePlan, serializePlan } from '../../src/modules/forwarding/request/forward-plan';
import { ForwardExecutor } from '../../src/modules/forwarding/request/forward-executor';
import { ForwardPlanner } from '../../src/modules/forwarding/request/forward-planner';
import { createApiKey } from '../factories/api-keys';
import { storeCard, StoredCard } from '../factories/cards';
import { createMerchantWithConfig, MerchantWithToken } from '../factories/forwarding-merchants';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http, HttpResult } from '../support/http';
import { LogCapture } from '../support/log-capture';
import { dropQueueKeys } from '../support/redis-keys';
import { startTestApp, testConfig, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * Standard Webhooks, written from the specification and sharing no code with the service: HMAC-SHA256 over
 * `${id}.${timestamp}.${body}` keyed by the base64 after `whsec_`; whether one `v1,` signature matches.
 */
function verified(secret: string, headers: IncomingMessage['headers'], body: string): boolean {
  const id = String(headers['webhook-id'] ?? '');
  const timestamp = String(headers['webhook-timestamp'] ?? '');
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest();
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .map((entry) => Buffer.from(entry.split(',', 2)[1] ?? '', 'base64'))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
}

interface Delivery {
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

async function startReceiver(): Promise<{ server: Server; port: number; received: Delivery[] }> {
  const received: Delivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, received };
}

describe('Disclosure budgets (issue 38, part 4; decision 0134)', () => {
  let api1: TestApp;
  let api2: TestApp;
  let worker: INestApplicationContext;
  let target: Downstream;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const queueName = `test-budgets-${randomUUID()}`;

  beforeAll(async () => {
    target = await startHttpDownstream();
    receiver = await startReceiver();
    const env = { FORWARD_INSECURE_HOSTS: '127.0.0.1', FORWARD_QUEUE_NAME: queueName, FORWARD_RETRY_BASE_MS: '50' };
    // Two API processes' worth of apps (each its own pools, caches and Redis connections) and a worker.
    api1 = await startTestApp({ env });
    api2 = await startTestApp({ env });
    const config = testConfig(env);
    worker = await NestFactory.createApplicationContext(
      WorkerModule.forRoot({ config, databaseUrl: config.databaseUrl!, logStream: new LogCapture() }),
      { logger: false },
    );
    await worker.init();
  });
  afterAll(async () => {
    await worker?.close();
    await api1?.close();
    await api2?.close();
    await target?.close();
    await new Promise((resolve) => receiver?.server.close(resolve));
    await dropQueueKeys(queueName);
  });

  /** A forward of the card's number through `t`, to a path of the target only this test uses. */
  function forward(t: TestApp, token: string, card: StoredCard, path: string, body?: string) {
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${target.url}${path}`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        'content-type': 'application/json',
      },
      rawBody: body ?? '{"number":"{{ CARD_NUMBER_1 }}"}',
    });
  }

  const reached = (path: string) => target.received.filter((r) => r.url === path).length;

  async function recordOf(t: TestApp, token: string, result: HttpResult) {
    // A forward's record id: its x-vault-forward-request-id, which a refusal before planning's end leaves to x-request-id.
    const id = result.headers.get('x-vault-forward-request-id') ?? result.headers.get('x-request-id');
    return (
      await waitFor(
        async () => {
          const found = await http(t.url, `/vault-forward/requests/${id}`, { token });
          return found.status === 200 && found;
        },
        { what: `the record of forward ${id}` },
      )
    ).body;
  }

  function refusals(t: TestApp, scope: string, limit: string): Promise<number> {
    return t
      .get(Metrics)
      .registry.getSingleMetric('vault_forward_disclosure_budget_refusals_total')!
      .get()
      .then((metric) => metric.values.find((v) => v.labels.scope === scope && v.labels.limit === limit)?.value ?? 0);
  }

  describe('a budget of N distinct cards per hour', () => {
    const N = 3;
    let merchant: MerchantWithToken;
    let cards: StoredCard[];
    let secret: string;
    const path = `/pay/${randomUUID()}`;

    beforeAll(async () => {
      merchant = await createMerchantWithConfig(api1, target.port, 'Budgeted');
      cards = [];
      for (let i = 0; i <= N; i++) cards.push(await storeCard(api1, merchant.id));
      const created = await http(api1.url, '/vault-forward/webhook-secrets', { method: 'POST', token: merchant.token });
      expect(created.status).toBe(201);
      secret = created.body.secret;
      const put = await http(api1.url, '/vault-forward/budget', {
        method: 'PUT',
        token: merchant.token,
        body: { distinct_cards: N, webhook_url: `http://127.0.0.1:${receiver.port}/budget/${merchant.id}` },
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({
        type: 'vault-forward-disclosure-budget',
        scope: 'merchant',
        window_seconds: 3600,
        distinct_cards: N,
        disclosures_per_card: 60,
        set: true,
      });
    });

    it('passes N cards across two API processes, refuses the N+1th with 429 and sends it nowhere', async () => {
      const before = await refusals(api2, 'merchant', 'distinct_cards');
      for (let i = 0; i < N; i++) {
        const sent = await forward(i % 2 === 0 ? api1 : api2, merchant.token, cards[i], path);
        expect(sent.status).toBe(200);
      }
      expect(reached(path)).toBe(N);

      // The other process than the last one counted: the count is shared.
      const refused = await forward(api2, merchant.token, cards[N], path);
      const problem = expectProblem(refused, 429, 'disclosure-budget-exceeded');
      expect(problem.detail).toContain(`more than ${N} distinct cards`);
      expect(problem.detail).not.toContain(cards[N].number);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600).toBe(true);
      expect(refused.headers.get('x-vault-forward-error')).toBe('true');
      expect(reached(path)).toBe(N);
      expect(await refusals(api2, 'merchant', 'distinct_cards')).toBe(before + 1);

      // The refusal is on record (the ledger's entry is made from the record), with no card disclosed.
      const record = await recordOf(api2, merchant.token, refused);
      expect(record).toMatchObject({ status: 429, error_type: 'disclosure-budget-exceeded' });
      // Its ledger entry (decision 0133): the refused card by id, no disclosure, the outcome the refusal.
      const entries = await api2.db.query<Array<Record<string, unknown>>>(
        'SELECT kind, status, error_type, payment_method_ids::text[] AS cards FROM vault_forward_ledger_entries WHERE record_id = $1',
        [record.id],
      );
      expect(entries).toEqual([
        { kind: 'outcome', status: 429, error_type: 'disclosure-budget-exceeded', cards: [cards[N].id] },
      ]);

      // A card already disclosed this window is within its own budget: it still passes, through either process.
      const again = await forward(api1, merchant.token, cards[0], path);
      expect(again.status).toBe(200);
      expect(reached(path)).toBe(N + 1);
    });

    it('announces the refusal once per window with a disclosure_budget.exceeded event signed with the webhook secret', async () => {
      const hook = `/budget/${merchant.id}`;
      const [event] = await waitFor(
        () =>
          receiver.received.filter((r) => r.url === hook).length > 0 && receiver.received.filter((r) => r.url === hook),
        {
          timeoutMs: 15_000,
          what: 'the budget event',
        },
      );
      expect(verified(secret, event.headers, event.body)).toBe(true);
      expect(JSON.parse(event.body)).toMatchObject({
        type: 'disclosure_budget.exceeded',
        merchant_account_id: merchant.id,
        scope: 'merchant',
        limit: 'distinct_cards',
        limit_value: N,
      });
      expect(event.body).not.toContain(cards[N].number);

      // Refused again, from both processes: still one event for this budget and window (one webhook-id).
      expectProblem(await forward(api1, merchant.token, cards[N], path), 429, 'disclosure-budget-exceeded');
      const last = await forward(api2, merchant.token, cards[N], path);
      expectProblem(last, 429, 'disclosure-budget-exceeded');
      await recordOf(api2, merchant.token, last);
      const [{ count }] = await api1.db.query<Array<{ count: number }>>(
        `SELECT count(*)::int AS count FROM vault_forward_callback_deliveries WHERE merchant_account_id = $1`,
        [merchant.id],
      );
      expect(count).toBe(1);
    });
  });

  it('refuses a card over its per-card budget, and lets other cards pass', async () => {
    const merchant = await createMerchantWithConfig(api1, target.port, 'Per card');
    const [card, other] = [await storeCard(api1, merchant.id), await storeCard(api1, merchant.id)];
    const put = await http(api2.url, '/vault-forward/budget', {
      method: 'PUT',
      token: merchant.token,
      body: { disclosures_per_card: 2, window_seconds: 600 },
    });
    expect(put.status).toBe(200);
    const path = `/per-card/${randomUUID()}`;
    expect((await forward(api1, merchant.token, card, path)).status).toBe(200);
    expect((await forward(api2, merchant.token, card, path)).status).toBe(200);
    const refused = await forward(api1, merchant.token, card, path);
    expectProblem(refused, 429, 'disclosure-budget-exceeded');
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(600);
    expect((await forward(api2, merchant.token, other, path)).status).toBe(200);
    expect(reached(path)).toBe(3);
  });

  it('a config budget counts only that config’s forwards, beside the merchant’s', async () => {
    const merchant = await createMerchantWithConfig(api1, target.port, 'Config budget');
    const configs = await http(api1.url, '/vault-forward/configs', { token: merchant.token });
    const configId = configs.body.items[0].id as string;
    const put = await http(api1.url, `/vault-forward/configs/${configId}/budget`, {
      method: 'PUT',
      token: merchant.token,
      body: { distinct_cards: 1 },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      scope: 'config',
      config_id: configId,
      distinct_cards: 1,
      allowed_placeholders: null,
    });
    const [a, b] = [await storeCard(api1, merchant.id), await storeCard(api1, merchant.id)];
    const path = `/config/${randomUUID()}`;
    expect((await forward(api1, merchant.token, a, path)).status).toBe(200);
    const refused = await forward(api2, merchant.token, b, path);
    expect(expectProblem(refused, 429, 'disclosure-budget-exceeded').detail).toContain(`config ${configId}`);
    expect(reached(path)).toBe(1);
    // Removed: the defaults apply again, at once in the process that removed it, in the other one once the
    // change notice arrives (Redis pub/sub; a refusal meanwhile counts nothing).
    expect(
      (await http(api2.url, `/vault-forward/configs/${configId}/budget`, { method: 'DELETE', token: merchant.token }))
        .status,
    ).toBe(204);
    await waitFor(async () => (await forward(api1, merchant.token, b, path)).status === 200, {
      what: 'the config budget gone in the other process',
    });
    expect(reached(path)).toBe(2);
  });

  describe('placeholders a config may fill', () => {
    let merchant: MerchantWithToken;
    let card: StoredCard;
    let configId: string;

    beforeAll(async () => {
      merchant = await createMerchantWithConfig(api1, target.port, 'Fraud tool');
      card = await storeCard(api1, merchant.id, { cardholder_name: 'Jo Doe' });
      configId = (await http(api1.url, '/vault-forward/configs', { token: merchant.token })).body.items[0].id;
      const put = await http(api1.url, `/vault-forward/configs/${configId}/budget`, {
        method: 'PUT',
        token: merchant.token,
        body: { allowed_placeholders: ['CARD_EXPIRATION_DATE', 'CARDHOLDER_NAME', 'CARD_BIN', 'CARD_LAST4'] },
      });
      expect(put.status).toBe(200);
      expect(put.body.allowed_placeholders).toEqual([
        'CARD_EXPIRATION_DATE',
        'CARDHOLDER_NAME',
        'CARD_BIN',
        'CARD_LAST4',
      ]);
    });

    it('refuses {{ CARD_NUMBER_1 }} with 400 naming the placeholder, and sends nothing', async () => {
      const path = `/fraud/${randomUUID()}`;
      const refused = await forward(
        api2,
        merchant.token,
        card,
        path,
        '{"exp":"{{ CARD_EXPIRATION_DATE_1 }}","n":"{{ CARD_NUMBER_1 }}"}',
      );
      const problem = expectProblem(refused, 400, 'placeholder-not-allowed');
      expect(problem.detail).toContain('{{ CARD_NUMBER_1 }}');
      expect(problem.errors).toEqual([
        { location: 'body', name: 'body', message: '{{ CARD_NUMBER_1 }} is not allowed by the config' },
      ]);
      expect(reached(path)).toBe(0);
    });

    it('names a forwarded header that holds one', async () => {
      const refused = await http(api1.url, '/vault-forward', {
        method: 'POST',
        token: merchant.token,
        headers: {
          'x-vault-forward-url': `${target.url}/fraud-header`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-payment-methods': card.id,
          'x-vault-forward-header-x-card': '{{ CARD_NUMBER_1 }}',
        },
      });
      expect(expectProblem(refused, 400, 'placeholder-not-allowed').errors[0]).toMatchObject({
        location: 'header',
        name: 'x-vault-forward-header-x-card',
      });
    });

    it('fills what it may: the expiry, the name, the first six and the last four, never the number', async () => {
      const path = `/fraud-ok/${randomUUID()}`;
      const body =
        '{"exp":"{{ CARD_EXPIRATION_DATE_1 }}","name":"{{ CARDHOLDER_NAME_1 }}",' +
        '"bin":"{{ CARD_BIN_1 }}","last4":"{{ CARD_LAST4_1 }}"}';
      const sent = await forward(api1, merchant.token, card, path, body);
      expect(sent.status).toBe(200);
      const [received] = target.received.filter((r) => r.url === path);
      expect(JSON.parse(received.body.toString('utf8'))).toEqual({
        exp: '12/30',
        name: 'Jo Doe',
        bin: card.number.slice(0, 6),
        last4: card.number.slice(-4),
      });
      expect(received.body.toString('utf8')).not.toContain(card.number);
    });
  });

  it('a queued plan is checked again when sent: a config narrowed after planning refuses it', async () => {
    const merchant = await createMerchantWithConfig(api1, target.port, 'Narrowed later');
    const card = await storeCard(api1, merchant.id);
    const configId = (await http(api1.url, '/vault-forward/configs', { token: merchant.token })).body.items[0].id;
    const path = `/narrowed/${randomUUID()}`;
    const headers = {
      'x-vault-forward-url': `${target.url}${path}`,
      'x-vault-forward-http-method': 'POST',
      'x-vault-forward-payment-methods': card.id,
      'content-type': 'application/json',
    };
    const plan = await api1.get(ForwardPlanner).plan({
      merchantAccountId: merchant.id,
      apiKeyId: null,
      requestId: randomUUID(),
      headers,
      rawHeaders: Object.entries(headers).flat(),
      body: Buffer.from('{"n":"{{ CARD_NUMBER_1 }}"}'),
    });
    const stored = serializePlan(plan);
    const put = await http(api1.url, `/vault-forward/configs/${configId}/budget`, {
      method: 'PUT',
      token: merchant.token,
      body: { allowed_placeholders: ['CARD_LAST4'] },
    });
    expect(put.status).toBe(200);
    await expect(worker.get(ForwardExecutor).execute(deserializePlan(stored))).rejects.toMatchObject({
      definition: { code: 'placeholder-not-allowed' },
      errors: [{ location: 'body', name: 'body', message: '{{ CARD_NUMBER_1 }} is not allowed by the config' }],
    });
    expect(reached(path)).toBe(0);
  });

  it('a queued attempt over its budget ends failed, recorded with 429, nothing sent (decision 0134)', async () => {
    const merchant = await createMerchantWithConfig(api1, target.port, 'Queued');
    const card = await storeCard(api1, merchant.id);
    const put = await http(api1.url, '/vault-forward/budget', {
      method: 'PUT',
      token: merchant.token,
      body: { disclosures_per_card: 1 },
    });
    expect(put.status).toBe(200);
    const path = `/queued/${randomUUID()}`;
    expect((await forward(api1, merchant.token, card, path)).status).toBe(200);
    const accepted = await http(api2.url, '/vault-forward', {
      method: 'POST',
      token: merchant.token,
      headers: {
        prefer: 'respond-async',
        'x-vault-forward-url': `${target.url}${path}`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': card.id,
        'content-type': 'application/json',
      },
      rawBody: '{"n":"{{ CARD_NUMBER_1 }}"}',
    });
    expect(accepted.status).toBe(202);
    const job = await waitFor(
      async () => {
        const found = await http(api1.url, `/vault-forward/jobs/${accepted.body.id}`, { token: merchant.token });
        return found.body?.status === 'failed' && found.body;
      },
      { timeoutMs: 15_000, what: 'the queued forward to fail' },
    );
    expect(job.attempts).toHaveLength(1);
    // No answer from the target (status null); the attempt's record has the service's 429.
    expect(job.attempts[0]).toMatchObject({ status: null, error_type: 'disclosure-budget-exceeded' });
    const record = await waitFor(
      async () => {
        const found = await http(api1.url, `/vault-forward/requests/${job.attempts[0].request_id}`, {
          token: merchant.token,
        });
        return found.status === 200 && found.body;
      },
      { what: 'the attempt’s record' },
    );
    expect(record).toMatchObject({ status: 429, error_type: 'disclosure-budget-exceeded' });
    expect(reached(path)).toBe(1);
  });

  describe('the budget routes', () => {
    it('answer the defaults until a budget is set, and refuse what is out of range naming the field', async () => {
      const merchant = await createMerchantWithConfig(api1, target.port, 'Routes');
      const read = await http(api1.url, '/vault-forward/budget', { token: merchant.token });
      expect(read.body).toEqual({
        type: 'vault-forward-disclosure-budget',
        scope: 'merchant',
        config_id: null,
        window_seconds: 3600,
        distinct_cards: 50_000,
        disclosures_per_card: 60,
        allowed_placeholders: null,
        webhook_url: null,
        set: false,
      });
      const zero = await http(api1.url, '/vault-forward/budget', {
        method: 'PUT',
        token: merchant.token,
        body: { distinct_cards: 0 },
      });
      expect(expectProblem(zero, 400, 'validation-failed').errors[0]).toMatchObject({ name: 'distinct_cards' });
      const insecure = await http(api1.url, '/vault-forward/budget', {
        method: 'PUT',
        token: merchant.token,
        body: { webhook_url: 'http://alerts.example.com/hook' },
      });
      expect(expectProblem(insecure, 400, 'validation-failed').errors[0]).toMatchObject({ name: 'webhook_url' });
      const configId = (await http(api1.url, '/vault-forward/configs', { token: merchant.token })).body.items[0].id;
      const unknown = await http(api1.url, `/vault-forward/configs/${configId}/budget`, {
        method: 'PUT',
        token: merchant.token,
        body: { allowed_placeholders: ['CARD_PIN'] },
      });
      expect(expectProblem(unknown, 400, 'validation-failed').errors[0].name).toMatch(/^allowed_placeholders/);
      const missing = await http(api1.url, `/vault-forward/configs/${randomUUID()}/budget`, { token: merchant.token });
      expectProblem(missing, 404, 'vault-forward-config-not-found');
    });

    it('need their own scope: a key that may forward may not lift a budget', async () => {
      const merchant = await createMerchantAccount(api1);
      const key = await createApiKey(api1, merchant.id);
      const forwarder = await key.token(['vault-forwards.write', 'vault-forwards.read', 'vault-forward-configs.write']);
      const put = await http(api1.url, '/vault-forward/budget', {
        method: 'PUT',
        token: forwarder,
        body: { distinct_cards: 100_000_000 },
      });
      expectProblem(put, 403, 'forbidden');
      const owner = await key.token(['vault-forward-budgets.write']);
      expect(
        (await http(api1.url, '/vault-forward/budget', { method: 'PUT', token: owner, body: { distinct_cards: 10 } }))
          .status,
      ).toBe(200);
    });
  });

  describe('without Redis: counted in PostgreSQL', () => {
    let pg1: TestApp;
    let pg2: TestApp;

    beforeAll(async () => {
      const env = { FORWARD_INSECURE_HOSTS: '127.0.0.1', REDIS_URL: '' };
      pg1 = await startTestApp({ env });
      pg2 = await startTestApp({ env });
    });
    afterAll(async () => {
      await pg1?.close();
      await pg2?.close();
    });

    it('two API processes share the count of distinct cards', async () => {
      const merchant = await createMerchantWithConfig(pg1, target.port, 'No Redis');
      const cards = [await storeCard(pg1, merchant.id), await storeCard(pg1, merchant.id)];
      cards.push(await storeCard(pg1, merchant.id));
      const put = await http(pg1.url, '/vault-forward/budget', {
        method: 'PUT',
        token: merchant.token,
        body: { distinct_cards: 2 },
      });
      expect(put.status).toBe(200);
      const path = `/no-redis/${randomUUID()}`;
      expect((await forward(pg1, merchant.token, cards[0], path)).status).toBe(200);
      expect((await forward(pg2, merchant.token, cards[1], path)).status).toBe(200);
      expectProblem(await forward(pg1, merchant.token, cards[2], path), 429, 'disclosure-budget-exceeded');
      expect((await forward(pg2, merchant.token, cards[0], path)).status).toBe(200);
      expect(reached(path)).toBe(3);
      const [{ count }] = await pg1.db.query<Array<{ count: number }>>(
        `SELECT count(*)::int AS count FROM vault_forward_disclosure_counts WHERE merchant_account_id = $1`,
        [merchant.id],
      );
      expect(count).toBe(2);
    });
  });

  describe('the counters, Redis and PostgreSQL, agree', () => {
    /** One scope of 2 distinct cards and 2 disclosures per card, in the hour that holds `now`. */
    const scopes = (now: number): CountedScope[] => [
      {
        scope: 'merchant',
        windowMs: 3_600_000,
        windowStartMs: Math.floor(now / 3_600_000) * 3_600_000,
        distinctCards: 2,
        perCard: 2,
      },
    ];
    type Take = (merchant: string, s: CountedScope[], cards: string[], now: number) => Promise<unknown>;

    async function run(take: Take): Promise<unknown[]> {
      const merchant = (await createMerchantAccount(api1)).id;
      const now = 1_900_000_000_000;
      const steps: string[][] = [['a'], ['b'], ['c'], ['a'], ['a'], ['b', 'c'], ['b']];
      const out: unknown[] = [];
      for (const cards of steps) out.push(await take(merchant, scopes(now), cards, now));
      // The next window starts afresh.
      out.push(await take(merchant, scopes(now + 3_600_000), ['c'], now + 3_600_000));
      return out;
    }

    const expected = [
      null,
      null,
      { index: 0, limit: 'distinct_cards' },
      null,
      { index: 0, limit: 'disclosures_per_card' },
      { index: 0, limit: 'distinct_cards' },
      null,
      null,
    ];

    it('in Redis (shared by every process)', async () => {
      const counter = api1.get(DisclosureCounter);
      expect(await run((m, s, c, n) => counter.take(m, s, c, n))).toEqual(expected);
    });

    it('in PostgreSQL (where no Redis is configured)', async () => {
      const repository = api2.get(DisclosureCountsRepository);
      expect(await run((m, s, c, n) => repository.take(m, s, c, n))).toEqual(expected);
    });

    it('in PostgreSQL, concurrent counts from two processes never pass the budget', async () => {
      const merchant = (await createMerchantAccount(api1)).id;
      const now = 1_900_000_000_000;
      const s: CountedScope[] = [{ ...scopes(now)[0], distinctCards: 5, perCard: null }];
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 === 0 ? api1 : api2).get(DisclosureCountsRepository).take(merchant, s, [`card-${i}`], now),
        ),
      );
      expect(results.filter((r) => r === null)).toHaveLength(5);
    });
  });
});
