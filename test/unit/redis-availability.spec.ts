import { EventEmitter } from 'node:events';
import { Logger, LoggerService } from '@nestjs/common';
import type Redis from 'ioredis';
import { RedisAvailability } from '../../src/platform/redis/redis';

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
    expect(lines.map((l) => l.message.msg)).toEqual([
      'redis unavailable: connection lost',
      'redis available again',
      'redis unavailable: ECONNRESET',
      'redis available again',
    ]);
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
    const text = JSON.stringify(lines);
    expect(text).toContain('redis unavailable');
    expect(text).not.toContain('s3cr');
  });

  it("never logs the sentinels' password either", () => {
    const availability = new RedisAvailability('redis://127.0.0.1:6379', 'sentinel-pw-9');
    const shared = availability.watch('shared', client());
    shared.emit('error', new Error('All sentinels are unreachable (auth sentinel-pw-9 refused)'));
    const text = JSON.stringify(lines);
    expect(text).toContain('redis unavailable');
    expect(text).not.toContain('sentinel-pw-9');
  });
});
