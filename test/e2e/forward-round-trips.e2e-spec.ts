import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { DisclosureCounter } from '../../src/modules/forwarding/budgets/disclosure-counter';
import { ForwardRecordsService } from '../../src/modules/forwarding/records/forward-records.service';
import { storeCard } from '../factories/cards';
import { createMerchantWithConfig, MerchantWithToken } from '../factories/forwarding-merchants';
import { http } from '../support/http';
import { PostgresCounter, PostgresCounts } from '../support/postgres-counter';
import { PrivateRedis } from '../support/private-redis';
import { RedisMonitor } from '../support/redis-monitor';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * Decision 0157 (issue 49, item 2): what a card forward waits for before it sends overlaps, and within one forward
 * there is at most one round trip to Redis (the disclosure budgets' count) and one to PostgreSQL (the disclosure's
 * commit) before the card leaves. Counted at the seams, independently of the service's clients: every message its
 * connections send to PostgreSQL passes a counting proxy, and every command its Redis (the test's own redis-server)
 * runs is seen by MONITOR. The target, on being asked, reads both counts before it answers.
 */
describe('A card forward makes one round trip to Redis and one to PostgreSQL before it sends (decision 0157)', () => {
  let redis: PrivateRedis;
  let monitor: RedisMonitor;
  let marker: Redis;
  let postgres: PostgresCounter;
  let target: Server;
  let t: TestApp;
  let merchant: MerchantWithToken;
  let cardId: string;
  /** What each request reaching the target found: PostgreSQL's counts then, and the Redis marker it ran. */
  const atSend: Array<{ postgres: PostgresCounts; marker: string }> = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    monitor = await RedisMonitor.start(redis.url);
    marker = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    postgres = await PostgresCounter.start(process.env.TEST_DATABASE_URL!);
    target = createServer((req, res) => {
      const seen = { postgres: postgres.read(), marker: `sent-${atSend.length}` };
      atSend.push(seen);
      req.resume();
      // Run once the request is here: every command the forward ran before its send comes before it in MONITOR.
      void marker.echo(seen.marker).then(() => res.end('{"ok":true}'));
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', () => resolve()));
    t = await startTestApp({
      env: {
        REDIS_URL: redis.url,
        DATABASE_URL: postgres.urlFor(process.env.TEST_DATABASE_URL!),
        FORWARD_INSECURE_HOSTS: '127.0.0.1',
      },
    });
    const port = (target.address() as AddressInfo).port;
    merchant = await createMerchantWithConfig(t, port, 'Round trips');
    cardId = (await storeCard(t, merchant.id)).id;
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => target?.close(resolve));
    await postgres?.close();
    marker?.disconnect();
    await monitor?.stop();
    await redis?.kill();
  });

  function forward() {
    const port = (target.address() as AddressInfo).port;
    return http(t.url, '/vault-forward', {
      method: 'POST',
      token: merchant.token,
      headers: {
        'x-vault-forward-url': `http://127.0.0.1:${port}/pay`,
        'x-vault-forward-http-method': 'POST',
        'x-vault-forward-payment-methods': cardId,
        'content-type': 'application/json',
      },
      rawBody: '{"number":"{{ CARD_NUMBER_1 }}","expiry":"{{ CARD_EXPIRATION_DATE_1 }}"}',
    });
  }

  /** Until the writes that follow a forward (its outcome, its count's durable copy) are in: none runs in the next one. */
  async function settled(): Promise<void> {
    await t.get(ForwardRecordsService).flush();
    await t.get(DisclosureCounter).settled();
  }

  it('counts the budget in Redis and commits the disclosure in PostgreSQL, once each, before the card leaves', async () => {
    // The caches (the token, the config, the budgets, the card's sealed row), the budget's window in Redis and its
    // script (sent whole once, by its SHA1 after).
    for (let i = 0; i < 2; i++) expect((await forward()).status).toBe(200);
    await settled();

    const perForward: Array<{ postgres: PostgresCounts; redis: string[] }> = [];
    for (let i = 0; i < 5; i++) {
      const start = `start-${i}`;
      await marker.echo(start);
      const before = postgres.read();
      const sends = atSend.length;
      expect((await forward()).status).toBe(200);
      const sent = atSend[sends];
      await waitFor(() => monitor.commands.some(([name, arg]) => name === 'echo' && arg === sent.marker), {
        what: `${sent.marker} in MONITOR`,
      });
      const from = monitor.commands.findIndex(([name, arg]) => name === 'echo' && arg === start);
      const to = monitor.commands.findIndex(([name, arg]) => name === 'echo' && arg === sent.marker);
      // A client's commands only: a script's own (MONITOR shows those as `lua`) ran within its one round trip.
      const redisCommands = monitor.commands
        .slice(from + 1, to)
        .filter((_, k) => monitor.clients[from + 1 + k] !== 'lua')
        .map(([name]) => name.toLowerCase());
      perForward.push({
        postgres: {
          roundTrips: sent.postgres.roundTrips - before.roundTrips,
          statements: sent.postgres.statements - before.statements,
        },
        redis: redisCommands,
      });
      await settled();
    }
    // Every forward: the count is its one Redis command. PostgreSQL's timers (purges, the spool's probe) share the
    // pool, so the fewest of five is the forward's own: its disclosure, one statement in one round trip.
    for (const { redis: commands } of perForward) expect(commands).toEqual(['evalsha']);
    const fewest = Math.min(...perForward.map((f) => f.postgres.roundTrips));
    expect(fewest).toBe(1);
    expect(Math.min(...perForward.map((f) => f.postgres.statements))).toBe(1);
  });
});
