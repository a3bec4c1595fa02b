import { EventEmitter } from 'node:events';
import { Logger, LoggerService } from '@nestjs/common';
import Redis from 'ioredis';
import { RedisAvailability } from '../../src/platform/redis/redis';
import { waitFor } from '../support/wait';

describe('RedisAvailability', () => {
  const lines: Array<{ level: string; message: Record<string, any> }> = [];
  const collector: LoggerService = {
    log: (message) => void lines.push({ level: 'log', message }),
    warn: (message) => void lines.push({ level: 'warn', message }),
    error: (message) => void lines.push({ level: 'error', message }),
  };
  beforeAll(() => Logger.overrideLogger(collector));
  afterAll(() => Logger.overrideLogger(new Logger()));
  beforeEach(() => (lines.length = 0));

  // The events ioredis emits; the tracker only listens.
  const client = () => new EventEmitter() as unknown as Redis;

  it('logs one line when the first connection fails and one when every failed connection is back', () => {
    const availability = new RedisAvailability('redis://127.0.0.1:6379');
    const shared = availability.watch('shared', client());
    const subscriber = availability.watch('subscriber', client());
    for (let retry = 0; retry < 10; retry++) {
      shared.emit('reconnecting');
      shared.emit('error', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }));
      subscriber.emit(
        'error',
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }),
      );
      subscriber.emit('reconnecting');
    }
    expect(lines).toEqual([
      {
        level: 'warn',
        message: {
          msg: 'redis unavailable: connection lost',
          redis: { connection: 'shared', reason: 'connection lost' },
        },
      },
    ]);
    expect(availability.available).toBe(false);
    shared.emit('ready');
    expect(lines).toHaveLength(1); // the subscriber is still down
    subscriber.emit('ready');
    expect(lines[1]).toEqual({
      level: 'log',
      message: { msg: 'redis available again', redis: { connection: 'subscriber' } },
    });
    expect(availability.available).toBe(true);
    shared.emit('ready');
    expect(lines).toHaveLength(2);
  });

  it('takes a connection whose state is ready for available, even when an old socket’s error came after its ready', () => {
    const availability = new RedisAvailability('redis://127.0.0.1:6379');
    const shared = Object.assign(client(), { status: 'reconnecting' });
    availability.watch('shared', shared);
    shared.emit('reconnecting');
    expect(availability.available).toBe(false);
    shared.status = 'ready';
    shared.emit('ready');
    // The closed socket's error, reported after the new one is ready: no reconnect, so no second 'ready' follows.
    shared.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    expect(availability.available).toBe(true);
    expect(lines.map((l) => l.message.msg)).toEqual(['redis unavailable: connection lost', 'redis available again']);
    // A connection that is not ready stays failed until it is.
    shared.status = 'connecting';
    shared.emit('reconnecting');
    expect(availability.available).toBe(false);
  });

  it('never logs the password of the Redis URL', () => {
    const availability = new RedisAvailability('redis://user:s3cr%2Fet@redis.internal:6379');
    const shared = availability.watch('shared', client());
    shared.emit(
      'error',
      new Error('WRONGPASS invalid password s3cr/et for user:s3cr%2Fet at redis://user:s3cr%2Fet@redis.internal:6379'),
    );
    shared.emit('reconnecting');
    const text = JSON.stringify(lines);
    expect(text).toContain('redis unavailable');
    expect(text).not.toContain('s3cr');
  });

  it("never logs the sentinels' password either", () => {
    const availability = new RedisAvailability('redis://127.0.0.1:6379', 'sentinel-pw-9');
    const shared = availability.watch('shared', client());
    shared.emit('error', new Error('All sentinels are unreachable (auth sentinel-pw-9 refused)'));
    shared.emit('reconnecting');
    const text = JSON.stringify(lines);
    expect(text).toContain('redis unavailable');
    expect(text).not.toContain('sentinel-pw-9');
  });

  describe('over a real connection', () => {
    const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const clients: Redis[] = [];
    afterEach(() => clients.splice(0).forEach((c) => c.disconnect()));

    async function connected(availability: RedisAvailability): Promise<Redis> {
      const redis = availability.watch('shared', new Redis(url, { maxRetriesPerRequest: 1 }));
      clients.push(redis);
      expect(await redis.ping()).toBe('PONG');
      return redis;
    }

    it('an error that leaves the connection up is no outage: nothing logged, still available, Redis answers', async () => {
      const availability = new RedisAvailability(url);
      const redis = await connected(availability);
      // What ioredis emits for a reply to no command (redis/ioredis#1981), on a connection that stays open.
      redis.emit('error', new Error('Command queue state error. If you can reproduce this, please report it.'));
      expect(availability.available).toBe(true);
      expect(await redis.ping()).toBe('PONG');
      expect(redis.status).toBe('ready');
      expect(lines).toEqual([]);
    });

    it('a connection Redis closes (CLIENT KILL from another one) logs unavailable, then available again', async () => {
      const availability = new RedisAvailability(url);
      const redis = await connected(availability);
      const killer = new Redis(url, { maxRetriesPerRequest: 1 });
      clients.push(killer);
      await killer.client('KILL', 'ID', String(await redis.client('ID')));
      await waitFor(() => lines.length === 2, { timeoutMs: 10_000, what: 'the reconnection' });
      expect(lines.map((l) => [l.level, l.message.msg])).toEqual([
        ['warn', 'redis unavailable: connection lost'],
        ['log', 'redis available again'],
      ]);
      expect(availability.available).toBe(true);
      expect(await redis.ping()).toBe('PONG');
    });
  });
});
