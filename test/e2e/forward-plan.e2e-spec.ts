import { randomUUID } from 'node:crypto';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { deserializePlan, serializePlan } from '../../src/modules/forwarding/request/forward-plan';
import { ForwardExecutor, isRetryable, reachedDownstream } from '../../src/modules/forwarding/request/forward-executor';
import { ForwardPlanInput, ForwardPlanner } from '../../src/modules/forwarding/request/forward-planner';
import { ForwardRecordsService } from '../../src/modules/forwarding/records/forward-records.service';
import { ProblemException } from '../../src/platform/problem/problem';
import { PaymentMethodsService } from '../../src/modules/payments/payment-methods/payment-methods.service';
import { WorkerModule } from '../../src/app/worker.module';
import { createApiKey } from '../factories/api-keys';
import { cardNumber, createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { closedPort, Downstream, startHttpDownstream } from '../support/downstream';
import { http } from '../support/http';
import { LogCapture } from '../support/log-capture';
import { startTestApp, testConfig, TestApp } from '../support/test-app';

/**
 * The seam of the queued path: the API plans, the plan travels as JSON (no card data in it), and a
 * worker process's application context executes it.
 */
describe('ForwardPlanner (API) → serializePlan → ForwardExecutor (worker context)', () => {
  let t: TestApp;
  let worker: INestApplicationContext;
  let downstream: Downstream;
  let refusedPort: number;
  let merchant: string;
  let card: { id: string; number: string };

  beforeAll(async () => {
    [downstream, refusedPort] = await Promise.all([startHttpDownstream(), closedPort()]);
    const env = { FORWARD_INSECURE_HOSTS: '127.0.0.1' };
    t = await startTestApp({ env });
    const config = testConfig(env);
    worker = await NestFactory.createApplicationContext(
      WorkerModule.forRoot({ config, databaseUrl: config.databaseUrl!, logStream: new LogCapture() }),
      {
        logger: false,
      },
    );
    await worker.init();
    merchant = (await createMerchantAccount(t)).id;
    const token = await (await createApiKey(t, merchant)).token();
    const created = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: {
        display_name: 'Plan test',
        hosts: [`127.0.0.1:${downstream.port}`, `127.0.0.1:${refusedPort}`],
        methods: ['POST'],
      },
    });
    expect(created.status).toBe(201);
    const number = cardNumber();
    card = { id: (await createCard(t, merchant, { number, expiration_date: '04/31' })).id, number };
  });

  afterAll(async () => {
    await worker?.close();
    await t?.close();
    await downstream?.close();
  });

  function input(url: string, body: string, paymentMethods = card.id): ForwardPlanInput {
    const headers = {
      'x-vault-forward-url': url,
      'x-vault-forward-http-method': 'POST',
      'x-vault-forward-payment-methods': paymentMethods,
      'x-vault-forward-header-x-card-tail': '{{ CARD_EXPIRATION_DATE_MM_1 }}',
      'content-type': 'application/json',
    };
    return {
      merchantAccountId: merchant,
      apiKeyId: null,
      requestId: randomUUID(),
      headers,
      rawHeaders: Object.entries(headers).flat(),
      body: Buffer.from(body),
    };
  }

  it('a plan made by the API, serialised without card data, is executed by a worker: the downstream gets the card', async () => {
    const plan = await t
      .get(ForwardPlanner)
      .plan(
        input(`${downstream.url}/pay?q=1`, '{"n":"{{ CARD_NUMBER_1 }}","cvv":"123","e":"\\\\{{ CARD_NUMBER_1 }}"}'),
      );
    const stored = serializePlan(plan);
    expect(stored).not.toContain(card.number);
    expect(stored).not.toContain(card.number.slice(-10));
    expect(stored).not.toContain('local');

    const before = downstream.received.length;
    const response = await worker.get(ForwardExecutor).execute(deserializePlan(Buffer.from(stored)));
    expect(response.status).toBe(200);
    const received = downstream.received.slice(before);
    expect(received).toHaveLength(1);
    expect(received[0].url).toBe('/pay?q=1');
    expect(received[0].body.toString()).toBe(`{"n":"${card.number}","cvv":"123","e":"{{ CARD_NUMBER_1 }}"}`);
    expect(received[0].headers['x-card-tail']).toBe('04');
    expect(received[0].headers['content-type']).toBe('application/json');

    // The worker's record writer recorded it, under the plan's id, with the API's config and ids.
    await worker.get(ForwardRecordsService).flush();
    const [row] = await t.db.query(
      `SELECT status, method, target_url, payment_method_ids::text[] AS pms, config_id FROM vault_forward_requests WHERE id = $1`,
      [plan.id],
    );
    expect(row).toMatchObject({
      status: 200,
      method: 'POST',
      target_url: `${downstream.url}/pay`,
      pms: [card.id],
      config_id: plan.configId,
    });
  });

  it('x-vault-forward-merchant-initiated is on the plan, survives serialisation, and reaches the worker’s record (issue 22)', async () => {
    const base = input(`${downstream.url}/mit`, '{"n":"{{ CARD_NUMBER_1 }}"}');
    const headers = { ...base.headers, 'x-vault-forward-merchant-initiated': 'true' };
    const plan = await t
      .get(ForwardPlanner)
      .plan({ ...base, headers, rawHeaders: Object.entries(headers).flat() as string[] });
    expect(plan.merchantInitiated).toBe(true);
    const stored = serializePlan(plan);
    const read = deserializePlan(Buffer.from(stored));
    expect(read.merchantInitiated).toBe(true);
    // A plan stored before the header was read says nothing: not merchant-initiated.
    const older = JSON.parse(stored) as Record<string, unknown>;
    delete older.merchant_initiated;
    expect(deserializePlan(JSON.stringify(older)).merchantInitiated).toBe(false);
    expect(() => deserializePlan(JSON.stringify({ ...older, merchant_initiated: 'yes' }))).toThrow(
      /merchant_initiated/,
    );

    expect((await worker.get(ForwardExecutor).execute(read)).status).toBe(200);
    await worker.get(ForwardRecordsService).flush();
    const [row] = await t.db.query(`SELECT merchant_initiated FROM vault_forward_requests WHERE id = $1`, [plan.id]);
    expect(row).toEqual({ merchant_initiated: true });
  });

  it('planning refuses what the synchronous path refuses, before anything is sent (a card of no one here)', async () => {
    const before = downstream.received.length;
    await expect(
      t.get(ForwardPlanner).plan(input(`${downstream.url}/pay`, '{"n":"{{ CARD_NUMBER_1 }}"}', randomUUID())),
    ).rejects.toMatchObject({
      definition: { code: 'unknown-payment-method' },
    });
    await expect(
      t.get(ForwardPlanner).plan(input(`${downstream.url}/pay`, '{"n":"{{ CARD_NUMBR_1 }}"}')),
    ).rejects.toMatchObject({
      definition: { code: 'invalid-placeholder' },
    });
    expect(downstream.received.length).toBe(before);
  });

  it('a card deleted after planning: the execution fails with a 4xx that is not retryable, nothing sent', async () => {
    const number = cardNumber();
    const doomed = (await createCard(t, merchant, { number })).id;
    const plan = deserializePlan(
      serializePlan(
        await t.get(ForwardPlanner).plan(input(`${downstream.url}/pay`, '{"n":"{{ CARD_NUMBER_1 }}"}', doomed)),
      ),
    );
    await t.get(PaymentMethodsService).delete(merchant, doomed);
    const before = downstream.received.length;
    const error = await worker
      .get(ForwardExecutor)
      .execute(plan)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemException);
    expect((error as ProblemException).definition.code).toBe('unknown-payment-method');
    expect(isRetryable(error)).toBe(false);
    expect(reachedDownstream(error)).toBe(false);
    expect(downstream.received.length).toBe(before);
  });

  it('a refused connection is retryable and did not reach the downstream; the attempt is recorded under its own id', async () => {
    const plan = deserializePlan(
      serializePlan(
        await t.get(ForwardPlanner).plan(input(`http://127.0.0.1:${refusedPort}/pay`, '{"n":"{{ CARD_NUMBER_1 }}"}')),
      ),
    );
    const attempt = randomUUID();
    const error = await worker
      .get(ForwardExecutor)
      .execute(plan, { recordId: attempt })
      .catch((e: unknown) => e);
    expect((error as ProblemException).definition.code).toBe('downstream-unreachable');
    expect(isRetryable(error)).toBe(true);
    expect(reachedDownstream(error)).toBe(false);
    await worker.get(ForwardRecordsService).flush();
    const [row] = await t.db.query(`SELECT status, error_type FROM vault_forward_requests WHERE id = $1`, [attempt]);
    expect(row).toEqual({ status: 502, error_type: 'downstream-unreachable' });
  });

  it('a plan carries how its body is escaped; one stored before it said so is escaped by its content type', async () => {
    const form = input(
      `${downstream.url}/form`,
      'exp={{ CARD_EXPIRATION_DATE_1 }}&as_is={{ CARD_EXPIRATION_DATE_1 | raw }}',
    );
    form.headers['content-type'] = 'application/x-www-form-urlencoded';
    const stored = JSON.parse(serializePlan(await t.get(ForwardPlanner).plan(form)));
    expect(stored).toMatchObject({ body_style: 'raw', body_encoding: 'form' });
    delete stored.body_encoding;
    const old = deserializePlan(JSON.stringify(stored));
    expect(old.bodyEncoding).toBe('form');
    const before = downstream.received.length;
    expect((await worker.get(ForwardExecutor).execute(old)).status).toBe(200);
    expect(downstream.received[before].body.toString()).toBe('exp=04%2F31&as_is=04/31');
    expect(() => deserializePlan(JSON.stringify({ ...stored, body_encoding: 'yaml' }))).toThrow(
      'body_encoding is not a body encoding',
    );
  });

  it('a garbled stored plan is refused when read back', () => {
    expect(() => deserializePlan('{"v":2}')).toThrow(/not a forward plan/);
    expect(() => deserializePlan('nope')).toThrow(/not a forward plan/);
  });
});
