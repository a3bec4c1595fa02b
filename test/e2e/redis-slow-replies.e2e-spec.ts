import { Logger, LoggerService } from '@nestjs/common';
import Redis from 'ioredis';
import {
  PUBLISH_TIMEOUT_MS,
  PUBLISHER_OPTIONS,
  RedisAvailability,
  SHARED_CLIENT_OPTIONS,
} from '../../src/platform/redis/redis';
import { TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';
import { testRedisUrl } from '../support/test-services';

const REDIS_URL = new URL(testRedisUrl());

// A busy machine answers late without being down. A connection whose commands time out used to fail
// its ioredis ready check (INFO, under the same short timeout), drop itself and log "redis
// unavailable" at start-up with Redis up (CI, fault-redis). A late reply may fail its own command;
// it must not be reported as an outage.
describe('Redis answering late', () => {
  const lines: unknown[] = [];
  const collector: LoggerService = {
    log: (message) => void lines.push(message),
    warn: (message) => void lines.push(message),
    error: (message) => void lines.push(message),
  };
  let proxy: TcpProxy;
  const clients: Redis[] = [];

  beforeAll(async () => {
    Logger.overrideLogger(collector);
    proxy = await TcpProxy.start(REDIS_URL.hostname, Number(REDIS_URL.port || 6379));
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await proxy.close();
    Logger.overrideLogger(new Logger());
  });

  it('a connection with a command timeout connects through replies slower than the timeout, and no outage is logged', async () => {
    proxy.slow(PUBLISH_TIMEOUT_MS + 300);
    const shared = new Redis(`redis://${proxy.address}`, SHARED_CLIENT_OPTIONS);
    clients.push(shared);
    const publisher = shared.duplicate(PUBLISHER_OPTIONS);
    clients.push(publisher);
    const availability = new RedisAvailability(`redis://${proxy.address}`);
    availability.watch('publisher', publisher);
    const errors: string[] = [];
    publisher.on('error', (error: Error) => errors.push(error.message));
    let readies = 0;
    publisher.on('ready', () => readies++);

    await waitFor(() => readies > 0, { what: 'the publisher to be ready', timeoutMs: 10_000 });
    // The late reply fails this publish (the caller gets false) but not the connection: twice, each time until
    // its late reply has reached the client, which is when a client that gave up on the connection would drop
    // and remake it.
    for (let i = 0; i < 2; i++) {
      const late = proxy.lateReplies;
      await expect(publisher.publish('redis-slow-replies-test', 'x')).rejects.toThrow('Command timed out');
      await waitFor(() => proxy.lateReplies > late, { what: 'the late reply to reach the publisher' });
    }

    expect(errors).toEqual([]);
    expect(readies).toBe(1);
    expect(publisher.status).toBe('ready');
    expect(availability.available).toBe(true);
    expect(lines).toEqual([]);

    proxy.slow(0);
  });
});
