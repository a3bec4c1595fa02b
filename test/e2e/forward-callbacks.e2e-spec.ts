import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { APP_CONFIG } from '../../src/platform/config/config.module';
import { CallbackDeliveriesRepository } from '../../src/modules/forwarding/callbacks/callback-deliveries.repository';
import { CallbackDeliveries, SecretCreatedMeanwhile } from '../../src/modules/forwarding/callbacks/callback-deliveries';
import { CALLBACK_JOB_NAME, CALLBACK_QUEUE, ForwardQueue } from '../../src/platform/job-queue/forward-queue';
import { ForwardJobHousekeeping } from '../../src/modules/forwarding/jobs/forward-job-housekeeping';
import { DownstreamClient } from '../../src/modules/forwarding/sending/downstream-client';
import { SecretSealer } from '../../src/modules/vault/secret-sealer';
import { NoWebhookSecretError, WebhookSigner } from '../../src/modules/merchants/webhook-secrets/webhook-signer';
import { WorkerModule } from '../../src/app/worker.module';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { http } from '../support/http';
import { dropQueueKeys } from '../support/redis-keys';
import { LogCapture } from '../support/log-capture';
import { startTestApp, testConfig, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { SYSTEM_CLOCK } from '../../src/platform/time/clock';
import { WebhookSecretEvents } from '../../src/modules/merchants/webhook-secrets/webhook-secret-events';

/**
 * Written from the Standard Webhooks specification, sharing no code with the service: HMAC-SHA256
 * over `${id}.${timestamp}.${body}` keyed by the base64 after `whsec_`; the header lists
 * space-separated `v1,<base64>`. Returns how many of the given secrets verify (constant-time compare).
 */
function verifiedBy(secrets: string[], headers: IncomingMessage['headers'], body: string): number {
  const id = String(headers['webhook-id'] ?? '');
  const timestamp = String(headers['webhook-timestamp'] ?? '');
  if (!id || !/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return 0;
  const given = String(headers['webhook-signature'] ?? '')
    .split(' ')
    .map((entry) => entry.split(',', 2))
    .filter(([version, signature]) => version === 'v1' && signature)
    .map(([, signature]) => Buffer.from(signature, 'base64'));
  return secrets.filter((secret) => {
    const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`${id}.${timestamp}.${body}`)
      .digest();
    return given.some((g) => g.length === expected.length && timingSafeEqual(g, expected));
  }).length;
}

/** Waits until `ok` holds for what `read` returns, and returns that. */
async function until<T>(read: () => T | Promise<T>, ok: (value: T) => boolean): Promise<T> {
  return (
    await waitFor(
      async () => {
        const value = await read();
        return ok(value) ? { value } : null;
      },
      { timeoutMs: 15_000 },
    )
  ).value;
}

interface Delivery {
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A callback receiver on 127.0.0.1: records every request and answers with the next scripted status (200 when none). */
async function startReceiver(): Promise<{
  server: Server;
  port: number;
  received: Delivery[];
  script: Map<string, number[]>;
}> {
  const received: Delivery[] = [];
  const script = new Map<string, number[]>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = script.get(req.url!)?.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status === 200 ? 'ok' : 'try again');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, received, script };
}

describe('Job-end callbacks (issue 11, item 5: delivery)', () => {
  let t: TestApp;
  let worker: INestApplicationContext;
  const workerLogs = new LogCapture();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let merchant: string;
  let token: string;
  const secrets: string[] = [];
  const queueName = `test-callbacks-${randomUUID()}`;

  beforeAll(async () => {
    receiver = await startReceiver();
    const env = {
      FORWARD_INSECURE_HOSTS: '127.0.0.1',
      FORWARD_RETRY_BASE_MS: '50',
      FORWARD_QUEUE_NAME: queueName,
    };
    t = await startTestApp({ env });
    const config = testConfig(env);
    worker = await NestFactory.createApplicationContext(
      WorkerModule.forRoot({ config, databaseUrl: config.databaseUrl!, logStream: workerLogs }),
      { logger: false },
    );
    await worker.init();
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    const config1 = await http(t.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: {
        display_name: 'Callbacks',
        hosts: [`127.0.0.1:${receiver.port}`, 'hooks.example.com'],
        methods: ['POST'],
      },
    });
    expect(config1.status).toBe(201);
    const secret = await http(t.url, '/vault-forward/webhook-secrets', { method: 'POST', token });
    expect(secret.status).toBe(201);
    secrets.push(secret.body.secret);
  });
  afterAll(async () => {
    await worker?.close();
    await t?.close();
    await new Promise((resolve) => receiver?.server.close(resolve));
    await dropQueueKeys(queueName);
  });

  const deliveriesTo = (path: string) => receiver.received.filter((r) => r.url === path);

  it('delivers the job resource signed so that a Standard Webhooks verifier accepts it', async () => {
    const path = `/hook/${randomUUID()}`;
    const resource = {
      type: 'vault-forward-job',
      id: randomUUID(),
      status: 'succeeded',
      response: { status: 200, body: 'card 4111111111111111' },
    };
    const messageId = await t
      .get(CallbackDeliveries)
      .deliver(merchant, `http://127.0.0.1:${receiver.port}${path}`, resource);
    const [delivery] = await until(
      () => deliveriesTo(path),
      (d) => d.length === 1,
    );
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['webhook-id']).toBe(messageId);
    expect(JSON.parse(delivery.body)).toEqual(resource);
    expect(verifiedBy(secrets, delivery.headers, delivery.body)).toBe(1);
    // A tampered body does not verify.
    expect(verifiedBy(secrets, delivery.headers, delivery.body.replace('succeeded', 'failed'))).toBe(0);
    // The stored body is sealed.
    const [row] = await t.db.query(
      `SELECT t::text AS text, state FROM vault_forward_callback_deliveries t WHERE message_id = $1`,
      [messageId],
    );
    // The whole number, not a prefix: a random id or ciphertext holds any four digits now and then.
    expect(row.text).not.toContain('4111111111111111');
    expect(row.text).not.toContain(Buffer.from('4111111111111111').toString('hex'));
    await until(
      async () =>
        (await t.db.query(`SELECT state FROM vault_forward_callback_deliveries WHERE message_id = $1`, [messageId]))[0]
          .state,
      (s) => s === 'delivered',
    );
  });

  it('after a rotation of the webhook secret the delivery carries two signatures, one per secret', async () => {
    const rotated = await http(t.url, '/vault-forward/webhook-secrets', { method: 'POST', token });
    expect(rotated.status).toBe(201);
    secrets.push(rotated.body.secret);
    const path = `/hook/${randomUUID()}`;
    await t
      .get(CallbackDeliveries)
      .deliver(merchant, `http://127.0.0.1:${receiver.port}${path}`, { type: 'vault-forward-job', id: randomUUID() });
    const [delivery] = await until(
      () => deliveriesTo(path),
      (d) => d.length === 1,
    );
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifiedBy([secrets[0]], delivery.headers, delivery.body)).toBe(1);
    expect(verifiedBy([secrets[1]], delivery.headers, delivery.body)).toBe(1);
  });

  it('a failing receiver (500, then 200) is retried with the same webhook-id; scheduling one message twice delivers once', async () => {
    const path = `/hook/${randomUUID()}`;
    receiver.script.set(path, [500]);
    const messageId = `job_${randomUUID().replace(/-/g, '')}`;
    const deliveries = t.get(CallbackDeliveries);
    await deliveries.deliver(merchant, `http://127.0.0.1:${receiver.port}${path}`, { n: 1 }, { messageId });
    await deliveries.deliver(merchant, `http://127.0.0.1:${receiver.port}${path}`, { n: 1 }, { messageId });
    const both = await until(
      () => deliveriesTo(path),
      (d) => d.length >= 2,
    );
    expect(both.map((d) => d.headers['webhook-id'])).toEqual([messageId, messageId]);
    for (const d of both) expect(verifiedBy(secrets, d.headers, d.body)).toBeGreaterThanOrEqual(1);
    const [row] = await until(
      () =>
        t.db.query(`SELECT state, attempts, last_status FROM vault_forward_callback_deliveries WHERE message_id = $1`, [
          messageId,
        ]),
      (rows) => rows[0]?.state === 'delivered',
    );
    expect(row).toEqual({ state: 'delivered', attempts: 2, last_status: 200 });
    expect(deliveriesTo(path)).toHaveLength(2);
  });

  it('a receiver that never accepts: bounded attempts, then failed', async () => {
    const path = `/hook/${randomUUID()}`;
    receiver.script.set(path, [503, 503, 503, 503]);
    const messageId = await t
      .get(CallbackDeliveries)
      .deliver(merchant, `http://127.0.0.1:${receiver.port}${path}`, { n: 2 }, { maxAttempts: 3 });
    const [row] = await until(
      () =>
        t.db.query(`SELECT state, attempts, last_status FROM vault_forward_callback_deliveries WHERE message_id = $1`, [
          messageId,
        ]),
      (rows) => rows[0]?.state === 'failed',
    );
    expect(row).toEqual({ state: 'failed', attempts: 3, last_status: 503 });
    expect(deliveriesTo(path)).toHaveLength(3);
  });

  const deliveryRow = (messageId: string) =>
    t.db.query(`SELECT state, attempts, last_status FROM vault_forward_callback_deliveries WHERE message_id = $1`, [
      messageId,
    ]);

  /** A delivery to a receiver path that answers `script` in turn (then 200), run until it is no longer pending. */
  async function deliverScripted(script: number[], maxAttempts: number) {
    const path = `/hook/${randomUUID()}`;
    receiver.script.set(path, script);
    const messageId = await t
      .get(CallbackDeliveries)
      .deliver(merchant, `http://127.0.0.1:${receiver.port}${path}`, { script }, { maxAttempts });
    const [row] = await until(
      () => deliveryRow(messageId),
      (rows) => rows[0]?.state !== 'pending',
    );
    return { path, messageId, row };
  }

  it('a receiver answering 4xx has not accepted the callback: 400, then 401, are retried with the same webhook-id', async () => {
    const { path, messageId, row } = await deliverScripted([400, 401], 5);
    expect(row).toEqual({ state: 'delivered', attempts: 3, last_status: 200 });
    expect(deliveriesTo(path).map((d) => d.headers['webhook-id'])).toEqual([messageId, messageId, messageId]);
  });

  it('a receiver that answers 404 every time: bounded attempts, then failed, never delivered', async () => {
    const { path, row } = await deliverScripted([404, 404, 404, 404], 3);
    expect(row).toEqual({ state: 'failed', attempts: 3, last_status: 404 });
    expect(deliveriesTo(path)).toHaveLength(3);
  });

  it('410 Gone ends the delivery at once: failed after that one attempt, no retry', async () => {
    const { path, row } = await deliverScripted([410], 5);
    expect(row).toEqual({ state: 'failed', attempts: 1, last_status: 410 });
    expect(deliveriesTo(path)).toHaveLength(1);
  });

  it('a queued forward with x-vault-forward-callback-url: when it ends, the job resource is delivered, signed', async () => {
    const path = `/hook/${randomUUID()}`;
    const pm = await http(t.url, '/payment-methods', {
      method: 'POST',
      token,
      body: { method: 'card', number: '4111111111111111', expiration_date: '12/30' },
    });
    expect(pm.status).toBe(201);
    const accepted = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        prefer: 'respond-async',
        'x-vault-forward-url': `http://127.0.0.1:${receiver.port}/downstream`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': pm.body.id,
        'x-vault-forward-callback-url': `http://127.0.0.1:${receiver.port}${path}`,
      },
      rawBody: '{"n":"{{ CARD_NUMBER_1 }}"}',
    });
    expect(accepted.status).toBe(202);
    const [delivery] = await until(
      () => deliveriesTo(path),
      (d) => d.length === 1,
    );
    const resource = JSON.parse(delivery.body);
    expect(resource).toMatchObject({
      type: 'vault-forward-job',
      id: accepted.body.id,
      status: 'succeeded',
      response: { status: 200, body: 'ok' },
    });
    expect(delivery.headers['webhook-id']).toBe(`job_${accepted.body.id.replace(/-/g, '')}`);
    expect(verifiedBy(secrets, delivery.headers, delivery.body)).toBeGreaterThanOrEqual(1);
    // The resource is what GET /vault-forward/jobs/{id} shows.
    const job = await http(t.url, `/vault-forward/jobs/${accepted.body.id}`, { token });
    expect(resource).toEqual(job.body);
  });

  it('a callback URL is shown, logged and refused like the target URL: never its query or user:password (issue 19, defect 6)', async () => {
    const path = `/hook/${randomUUID()}`;
    const token_ = `cb-token-${randomUUID()}`;
    const callback = `http://127.0.0.1:${receiver.port}${path}?token=${token_}#frag`;
    const accepted = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        prefer: 'respond-async',
        'x-vault-forward-url': `http://127.0.0.1:${receiver.port}/downstream`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-callback-url': callback,
      },
      rawBody: '{}',
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body.callback_url).toBe(`http://127.0.0.1:${receiver.port}${path}`);
    // The receiver still gets its token: only what is shown and logged loses it.
    const [delivery] = await until(
      () => receiver.received.filter((r) => r.url.startsWith(`${path}?`)),
      (d) => d.length === 1,
    );
    expect(delivery.url).toBe(`${path}?token=${token_}`);
    expect(JSON.parse(delivery.body).callback_url).toBe(`http://127.0.0.1:${receiver.port}${path}`);
    const job = await http(t.url, `/vault-forward/jobs/${accepted.body.id}`, { token });
    expect(job.body.callback_url).toBe(`http://127.0.0.1:${receiver.port}${path}`);
    // At rest the whole URL exists only sealed: the job row and the delivery row hold it as logged.
    const rowsText = async (sql: string, value: string) =>
      (await t.db.query<Array<{ text: string }>>(sql, [value])).map((r) => r.text).join('\n');
    const jobRow = await rowsText(`SELECT t::text AS text FROM vault_forward_jobs t WHERE id = $1`, accepted.body.id);
    expect(jobRow).toContain(`/hook/`);
    expect(jobRow).not.toContain(token_);
    const deliveryRow = await rowsText(
      `SELECT t::text AS text FROM vault_forward_callback_deliveries t WHERE message_id = $1`,
      `job_${accepted.body.id.replace(/-/g, '')}`,
    );
    expect(deliveryRow).toContain(`/hook/`);
    expect(deliveryRow).not.toContain(token_);
    const sealedRow = await rowsText(
      `SELECT t::text AS text FROM vault_forward_job_callback_urls t WHERE job_id = $1`,
      accepted.body.id,
    );
    expect(sealedRow).not.toBe('');
    for (const text of [jobRow, deliveryRow, sealedRow]) {
      expect(text).not.toContain(token_);
      expect(text).not.toContain(Buffer.from(token_).toString('hex'));
    }

    // Credentials are refused (400 naming the header), and neither the refusal nor its log line repeats them.
    const password = `pw-${randomUUID()}`;
    const refused = await http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        prefer: 'respond-async',
        'x-vault-forward-url': `http://127.0.0.1:${receiver.port}/downstream`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-callback-url': `https://user:${password}@hooks.example.com/x?token=${token_}`,
      },
      rawBody: '{}',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).not.toContain(password);
    const line = t.logs.requestLine(refused.headers.get('x-request-id')!);
    expect(line?.req.headers['x-vault-forward-callback-url']).toBe('https://hooks.example.com/x');
    expect(t.logs.requestLine(accepted.headers.get('x-request-id')!)?.req.headers['x-vault-forward-callback-url']).toBe(
      `http://127.0.0.1:${receiver.port}${path}`,
    );
    for (const text of [t.logs.text, workerLogs.text]) {
      expect(text).not.toContain(token_);
      expect(text).not.toContain(password);
    }
  });

  /**
   * A callback of a merchant account that has no webhook secret yet, stored through `deliveries` (the
   * app's own by default), and its row as the database has it.
   */
  async function secretlessDelivery(n: number, deliveries = t.get(CallbackDeliveries)) {
    const merchantAccountId = (await createMerchantAccount(t)).id;
    const merchantToken = await (await createApiKey(t, merchantAccountId)).token();
    const path = `/hook/${randomUUID()}`;
    const messageId = await deliveries.deliver(merchantAccountId, `http://127.0.0.1:${receiver.port}${path}`, { n });
    const row = () =>
      t.db
        .query(
          `SELECT id, state, attempts, last_error, next_attempt_at = 'infinity' AS waiting, next_attempt_at <= now() AS due
             FROM vault_forward_callback_deliveries WHERE message_id = $1`,
          [messageId],
        )
        .then(
          (
            rows: Array<{
              id: string;
              state: string;
              attempts: number;
              last_error: string;
              waiting: boolean;
              due: boolean;
            }>,
          ) => rows[0],
        );
    const createSecret = () => http(t.url, '/vault-forward/webhook-secrets', { method: 'POST', token: merchantToken });
    return { path, messageId, row, createSecret };
  }

  it('without a webhook secret a callback waits, uncounted, and is delivered once one is created (issue 19)', async () => {
    const deliveries = t.get(CallbackDeliveries);
    const { path, messageId, row, createSecret } = await secretlessDelivery(5);
    await until(row, (r) => r?.waiting === true);
    // However many housekeeping sweeps run, nothing is sent and no attempt is spent.
    for (let i = 0; i < 3; i++) await deliveries.sweep();
    expect(await row()).toMatchObject({
      state: 'pending',
      attempts: 0,
      last_error: expect.stringContaining('webhook signing secret'),
      waiting: true,
    });
    expect(deliveriesTo(path)).toHaveLength(0);

    const created = await createSecret();
    expect(created.status).toBe(201);
    const [delivery] = await until(
      () => deliveriesTo(path),
      (d) => d.length === 1,
    );
    expect(delivery.headers['webhook-id']).toBe(messageId);
    expect(verifiedBy([created.body.secret], delivery.headers, delivery.body)).toBe(1);
    expect(await until(row, (r) => r?.state === 'delivered')).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it("a secret created while the waiting try's BullMQ job is still held wakes the callback at once, not at the next sweep", async () => {
    const { path, row, createSecret } = await secretlessDelivery(7);
    const { id } = await until(row, (r) => r?.waiting === true);
    // BullMQ holds job <id>.1 as when the try that put the delivery off is still finishing (here delayed
    // for two minutes, so that only the wake-up can deliver within the test's 15 s).
    await t.get<ForwardQueue>(CALLBACK_QUEUE).enqueue(id, { name: CALLBACK_JOB_NAME, attempt: 1, delayMs: 120_000 });
    expect((await createSecret()).status).toBe(201);

    await until(
      () => deliveriesTo(path),
      (d) => d.length === 1,
    );
    expect(await until(row, (r) => r?.state === 'delivered')).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it('a try that finds no secret, one created before it puts itself off, runs again instead of waiting for a sweep', async () => {
    // The signer looks, finds nothing, and the secret is created right after: the window between the
    // signing and the put-off's lock, made certain here.
    let createSecret: () => Promise<{ status: number }> = () => Promise.reject(new Error('not yet'));
    const lateSigner = Object.create(t.get(WebhookSigner), {
      signWebhook: {
        value: async () => {
          expect((await createSecret()).status).toBe(201);
          throw new NoWebhookSecretError();
        },
      },
    }) as WebhookSigner;
    const queueless = new CallbackDeliveries(
      t.get(CallbackDeliveriesRepository),
      t.get(SecretSealer),
      lateSigner,
      t.get(DownstreamClient),
      t.get(APP_CONFIG),
      SYSTEM_CLOCK,
      // Its own events: a queueless instance is woken by nothing the app's secrets do.
      new WebhookSecretEvents(),
    );
    const delivery = await secretlessDelivery(8, queueless);
    createSecret = delivery.createSecret;
    const { id } = await delivery.row();
    // The processor puts the job off at once on this error (no try spent); the row is due, attempt 1 free.
    await expect(queueless.handle({ jobId: id, attempt: 1 })).rejects.toBeInstanceOf(SecretCreatedMeanwhile);
    expect(await delivery.row()).toMatchObject({ state: 'pending', attempts: 0, waiting: false, due: true });
    // The same job run again claims attempt 1 and delivers.
    await t.get(CallbackDeliveries).handle({ jobId: id, attempt: 1 });
    expect(deliveriesTo(delivery.path)).toHaveLength(1);
  });

  it('a callback still waiting for a webhook secret after FORWARD_JOB_RETENTION ends failed, saying why (issue 19)', async () => {
    const lonely = (await createMerchantAccount(t)).id;
    const deliveries = t.get(CallbackDeliveries);
    const messageId = await deliveries.deliver(lonely, `http://127.0.0.1:${receiver.port}/hook/${randomUUID()}`, {
      n: 6,
    });
    const read = () =>
      t.db.query(
        `SELECT state, last_error, next_attempt_at = 'infinity' AS waiting FROM vault_forward_callback_deliveries WHERE message_id = $1`,
        [messageId],
      );
    await until(read, (rows) => rows[0]?.waiting === true);
    await t.db.query(
      `UPDATE vault_forward_callback_deliveries SET created_at = now() - interval '8 days' WHERE message_id = $1`,
      [messageId],
    );
    await deliveries.purgeEnded();
    const [ended] = await read();
    expect(ended.state).toBe('failed');
    expect(ended.last_error).toMatch(/no webhook signing secret .*FORWARD_JOB_RETENTION/);
  });

  it('a delivery whose BullMQ job was lost is enqueued again by the housekeeping and delivered (issue 21, item 6)', async () => {
    // Deliveries stored with no queue to take their attempt: the job lost as when Redis loses its data.
    const queueless = new CallbackDeliveries(
      t.get(CallbackDeliveriesRepository),
      t.get(SecretSealer),
      t.get(WebhookSigner),
      t.get(DownstreamClient),
      t.get(APP_CONFIG),
      SYSTEM_CLOCK,
      // Its own events: a queueless instance is woken by nothing the app's secrets do.
      new WebhookSecretEvents(),
    );
    const path = `/hook/${randomUUID()}`;
    const messageId = await queueless.deliver(merchant, `http://127.0.0.1:${receiver.port}${path}`, { n: 6 });
    const row = async () =>
      (
        await t.db.query(`SELECT state, attempts FROM vault_forward_callback_deliveries WHERE message_id = $1`, [
          messageId,
        ])
      )[0] as { state: string; attempts: number };
    expect(await row()).toEqual({ state: 'pending', attempts: 0 });
    // Overdue by more than FORWARD_JOB_OVERDUE: the housekeeping's next pass finds it.
    await t.db.query(
      `UPDATE vault_forward_callback_deliveries SET next_attempt_at = now() - interval '1 hour' WHERE message_id = $1`,
      [messageId],
    );
    expect(await worker.get(ForwardJobHousekeeping).pass()).toBe(true);
    const [delivery] = await until(
      () => deliveriesTo(path),
      (d) => d.length === 1,
    );
    expect(delivery.headers['webhook-id']).toBe(messageId);
    expect(await until(row, (r) => r.state === 'delivered')).toEqual({ state: 'delivered', attempts: 1 });
  });

  it('ended deliveries are purged after FORWARD_JOB_RETENTION; pending ones stay', async () => {
    const deliveries = t.get(CallbackDeliveries);
    const path = `/hook/${randomUUID()}`;
    const messageId = await deliveries.deliver(merchant, `http://127.0.0.1:${receiver.port}${path}`, { n: 4 });
    await until(
      async () =>
        (await t.db.query(`SELECT state FROM vault_forward_callback_deliveries WHERE message_id = $1`, [messageId]))[0]
          ?.state,
      (s) => s === 'delivered',
    );
    await t.db.query(
      `UPDATE vault_forward_callback_deliveries SET ended_at = now() - interval '8 days' WHERE message_id = $1`,
      [messageId],
    );
    expect(await deliveries.purgeEnded()).toBeGreaterThanOrEqual(1);
    expect(
      await t.db.query(`SELECT 1 FROM vault_forward_callback_deliveries WHERE message_id = $1`, [messageId]),
    ).toHaveLength(0);
  });

  it('callback URL as a target: unlisted host, http, credentials, private literals refused naming the header, none queued', async () => {
    const ask = (callback: string) =>
      http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          prefer: 'respond-async',
          'x-vault-forward-url': `http://127.0.0.1:${receiver.port}/downstream`,
          'x-vault-forward-http-method': 'POST',
          'x-vault-forward-callback-url': callback,
        },
        rawBody: '{}',
      });
    const before = await t.db.query(
      `SELECT count(*)::int AS n FROM vault_forward_jobs WHERE merchant_account_id = $1`,
      [merchant],
    );
    for (const url of [
      'https://not-enabled.example.com/x',
      'http://hooks.example.com/x',
      'https://u:p@hooks.example.com/x',
      'https://10.0.0.1/x',
      'https://[::1]/x',
      'not a url',
    ]) {
      const refused = await ask(url);
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(refused.status).toBeLessThan(500);
      expect(refused.body.errors).toEqual([
        expect.objectContaining({ location: 'header', name: 'x-vault-forward-callback-url' }),
      ]);
    }
    const after = await t.db.query(`SELECT count(*)::int AS n FROM vault_forward_jobs WHERE merchant_account_id = $1`, [
      merchant,
    ]);
    expect(after[0].n).toBe(before[0].n);
    expect((await ask('https://hooks.example.com/x')).status).toBe(202);
  });

  it('the SSRF guard applies to deliveries: a callback to a private address is never sent', async () => {
    const messageId = await t
      .get(CallbackDeliveries)
      .deliver(merchant, 'https://10.255.255.1/hook', { n: 3 }, { maxAttempts: 1 });
    const [row] = await until(
      () =>
        t.db.query(`SELECT state, last_error FROM vault_forward_callback_deliveries WHERE message_id = $1`, [
          messageId,
        ]),
      (rows) => rows[0]?.state === 'failed',
    );
    expect(row.last_error).toMatch(/private|reserved|not|address/i);
  });
});
