import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CallbackDeliveries } from '../../src/forward-callbacks/callback-deliveries';
import { WorkerModule } from '../../src/worker.module';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { http } from '../support/http';
import { LogCapture } from '../support/log-capture';
import { startTestApp, testConfig, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

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
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let merchant: string;
  let token: string;
  const secrets: string[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    const env = {
      FORWARD_INSECURE_HOSTS: '127.0.0.1',
      FORWARD_RETRY_BASE_MS: '50',
      FORWARD_QUEUE_NAME: `test-callbacks-${randomUUID()}`,
    };
    t = await startTestApp({ env });
    const config = testConfig(env);
    worker = await NestFactory.createApplicationContext(
      WorkerModule.forRoot({ config, databaseUrl: config.databaseUrl!, logStream: new LogCapture() }),
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
  });

  const deliveriesTo = (path: string) => receiver.received.filter((r) => r.url === path);

  it('delivers the job resource signed so that a Standard Webhooks verifier accepts it', async () => {
    const path = `/hook/${randomUUID()}`;
    const resource = {
      type: 'vault-forward-job',
      id: randomUUID(),
      status: 'succeeded',
      response: { status: 200, body: 'card 4111…' },
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
    expect(row.text).not.toContain('4111');
    expect(row.text).not.toContain(Buffer.from('4111').toString('hex'));
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
