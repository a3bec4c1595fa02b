import Redis from 'ioredis';
import { CALLBACK_QUEUE_SUFFIX } from '../../src/platform/redis/queues';
import { testRedisUrl } from './test-services';

/**
 * Removes every key of one forward queue and of its job-end callbacks' queue (`bull:<queue>:*` and
 * `bull:<queue>-callbacks:*`). Tests and benchmarks share one Redis with each other and with later runs
 * on this machine: a queue left behind is thousands of keys that every later SCAN has to walk.
 */
export async function dropQueueKeys(queueName: string, url = testRedisUrl()): Promise<void> {
  await dropKeys(
    [queueName, `${queueName}${CALLBACK_QUEUE_SUFFIX}`].map((name) => `bull:${name}:*`),
    url,
  );
}

/** Removes every key matching one of `patterns` (SCAN MATCH globs): what a test left in the shared Redis. */
export async function dropKeys(patterns: readonly string[], url = testRedisUrl()): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    for (const pattern of patterns) {
      const keys = await keysMatching(redis, pattern);
      for (let i = 0; i < keys.length; i += 1000) await redis.unlink(...keys.slice(i, i + 1000));
    }
  } finally {
    redis.disconnect();
  }
}

/** Every key matching `pattern` (SCAN MATCH, so a large Redis is not blocked as KEYS would). */
export async function keysMatching(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/**
 * Every key matching `pattern` with its value, as text (strings, hashes, lists, sorted sets, sets and
 * streams): what a reader of the Redis data sees of a queue.
 */
export async function keysAndValues(pattern: string, url = testRedisUrl()): Promise<Array<[string, string]>> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  const out: Array<[string, string]> = [];
  try {
    await redis.connect();
    for (const key of await keysMatching(redis, pattern)) {
      const type = await redis.type(key);
      const value =
        type === 'string'
          ? await redis.get(key)
          : type === 'hash'
            ? await redis.hgetall(key)
            : type === 'list'
              ? await redis.lrange(key, 0, -1)
              : type === 'zset'
                ? await redis.zrange(key, '0', '-1')
                : type === 'set'
                  ? await redis.smembers(key)
                  : type === 'stream'
                    ? await redis.xrange(key, '-', '+')
                    : null;
      out.push([key, `${key}\n${typeof value === 'string' ? value : JSON.stringify(value)}`]);
    }
  } finally {
    redis.disconnect();
  }
  return out;
}
