import type Redis from 'ioredis';
import { REDIS } from '../../src/platform/redis/redis';
import { SharedCaches } from '../../src/platform/redis/shared-cache';
import { createApiKey } from '../factories/api-keys';
import { createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { Downstream, startHttpDownstream } from '../support/downstream';
import { expectProblem, http, HttpResult } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';
import { TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';
import { allowHeavyDisclosure } from '../factories/disclosure-budgets';
import { testRedisUrl } from '../support/test-services';

/**
 * A request that must be answered while Redis is away: one that waits on Redis hangs until ioredis gives
 * up, so a deadline fails it (the test's subject is that nothing waits on Redis, not how fast the answer is).
 */
async function answered(request: Promise<HttpResult>, limitMs = 5000): Promise<{ result: HttpResult }> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    request,
    new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${limitMs} ms`)), limitMs)),
    ),
  ]).finally(() => clearTimeout(timer));
  return { result };
}

/**
 * Every line about Redis after start-up, outside requests (Nest's module initialisation lines name
 * RedisModule), of both processes together: the two API apps share this Jest process, and nestjs-pino
 * writes every line logged outside a request to the first app's destination.
 */
const redisLines = (...apps: TestApp[]) =>
  apps
    .flatMap((t) => t.logs.lines)
    .filter(
      (line) => line.context !== 'InstanceLoader' && !line.req && JSON.stringify(line).toLowerCase().includes('redis'),
    );

describe('Fault: Redis becomes unreachable under the API and comes back', () => {
  let proxy: TcpProxy;
  let a: TestApp;
  let b: TestApp;
  let downstream: Downstream;
  let merchant: string;
  let token: string;
  let configId: string;
  /** Whatever reached the console or stderr of this process (ioredis prints "[ioredis] Unhandled error event" there). */
  const consoleOutput: string[] = [];
  const restore: Array<() => void> = [];

  beforeAll(async () => {
    for (const method of ['error', 'warn', 'log', 'info'] as const) {
      const original = console[method].bind(console);
      console[method] = (...args: unknown[]) => void consoleOutput.push(args.map(String).join(' '));
      restore.push(() => (console[method] = original));
    }
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = (chunk: string | Uint8Array, ...rest: never[]) => {
      consoleOutput.push(String(chunk));
      return write(chunk, ...rest);
    };
    restore.push(() => (process.stderr.write = write));

    proxy = await TcpProxy.start('127.0.0.1', Number(new URL(testRedisUrl()).port || 6379));
    downstream = await startHttpDownstream();
    const env = { REDIS_URL: `redis://${proxy.address}`, FORWARD_INSECURE_HOSTS: '127.0.0.1' };
    [a, b] = await Promise.all([startTestApp({ env }), startTestApp({ env })]);
    await Promise.all([a.get(SharedCaches).whenSubscribed(), b.get(SharedCaches).whenSubscribed()]);

    merchant = (await createMerchantAccount(a)).id;
    await allowHeavyDisclosure(a.db, merchant);
    token = await (await createApiKey(a, merchant, 'ES256')).token();
    const config = await http(a.url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Downstream', hosts: [`127.0.0.1:${downstream.port}`] },
    });
    expect(config.status).toBe(201);
    configId = config.body.id;
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([proxy?.close(), downstream?.close()]);
    for (const undo of restore) undo();
  });

  const forward = (t: TestApp, cardId: string) =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        'x-vault-forward-url': `${downstream.url}/charge`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': cardId,
        'content-type': 'application/json',
      },
      rawBody: JSON.stringify({ number: '{{ CARD_NUMBER_1 }}' }),
    });

  it('answers writes at once, keeps forwarding, logs each change once, and recovers without restart', async () => {
    const kept = await createCard(a, merchant);
    const doomed = await createCard(a, merchant);
    for (const t of [a, b]) expect((await forward(t, kept.id)).status).toBe(200);
    expect(redisLines(a, b)).toEqual([]);

    // ---- Redis goes away.
    const reconnects = { a: 0, b: 0 };
    a.get<Redis>(REDIS).on('reconnecting', () => reconnects.a++);
    b.get<Redis>(REDIS).on('reconnecting', () => reconnects.b++);
    await proxy.cut();

    const deleted = await answered(http(a.url, `/payment-methods/${doomed.id}`, { method: 'DELETE', token }));
    expect(deleted.result.status).toBe(204);
    const updated = await answered(
      http(a.url, `/vault-forward/configs/${configId}`, { method: 'PUT', token, body: { display_name: 'Renamed' } }),
    );
    expect(updated.result.status).toBe(200);
    expect(updated.result.body.display_name).toBe('Renamed');
    const revokeMe = await createApiKey(a, merchant);
    const revoked = await answered(http(a.url, `/api-keys/${revokeMe.id}`, { method: 'DELETE', token }));
    expect(revoked.result.status).toBe(204);

    // Forwards go on from the database and the caches (their TTLs bound what a lost notice leaves behind).
    for (const t of [a, b]) expect((await answered(forward(t, kept.id))).result.status).toBe(200);
    expectProblem(await forward(a, doomed.id), 400, 'unknown-payment-method');
    // Readiness says what is wrong.
    expectProblem(await http(a.url, '/health/ready'), 503, 'service-unavailable');

    // Let ioredis retry several times: the log must not grow with its retries.
    await waitFor(() => reconnects.a >= 4 && reconnects.b >= 4, {
      what: 'several reconnection attempts in both processes',
      timeoutMs: 15_000,
    });
    for (const t of [a, b]) expect((await forward(t, kept.id)).status).toBe(200);
    const again = await answered(
      http(a.url, `/vault-forward/configs/${configId}`, {
        method: 'PUT',
        token,
        body: { display_name: 'Renamed again' },
      }),
    );
    expect(again.result.status).toBe(200);

    // One line per process, however many times ioredis retried.
    const down = redisLines(a, b);
    expect(down.map((l) => l.msg)).toEqual([
      expect.stringMatching(/^redis unavailable: /),
      expect.stringMatching(/^redis unavailable: /),
    ]);
    for (const line of down) {
      expect(line).toMatchObject({
        level: 40,
        context: 'Redis',
        redis: { connection: expect.any(String), reason: expect.any(String) },
      });
    }

    // ---- Redis comes back.
    await proxy.restore();
    await waitFor(() => redisLines(a, b).filter((l) => l.msg === 'redis available again').length >= 2, {
      what: 'both processes to report Redis back',
      timeoutMs: 15_000,
    });
    expect(
      redisLines(a, b)
        .map((l) => l.msg)
        .sort(),
    ).toEqual([
      'redis available again',
      'redis available again',
      expect.stringMatching(/^redis unavailable: /),
      expect.stringMatching(/^redis unavailable: /),
    ]);
    expect((await http(a.url, '/health/ready')).status).toBe(200);

    // Invalidation across processes works again: B caches a card after the reconnection, A deletes it,
    // and B refuses it well before its 60 s TTL.
    const later = await createCard(a, merchant);
    expect((await forward(b, later.id)).status).toBe(200);
    expect((await http(a.url, `/payment-methods/${later.id}`, { method: 'DELETE', token })).status).toBe(204);
    await waitFor(async () => (await forward(b, later.id)).status === 400, {
      what: 'B to drop the card deleted through A',
      timeoutMs: 1000,
    });

    expect(consoleOutput.filter((line) => /ioredis|redis/i.test(line))).toEqual([]);
  });
});
