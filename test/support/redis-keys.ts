import Redis from 'ioredis';
import { CALLBACK_QUEUE_SUFFIX } from '../../src/platform/redis/queues';

/**
 * Removes every key of one forward queue and of its job-end callbacks' queue (`bull:<queue>:*` and
 * `bull:<queue>-callbacks:*`). Tests and benchmarks share one Redis with each other and with later runs
 * on this machine: a queue left behind is thousands of keys that every later SCAN has to walk.
 */
export async function dropQueueKeys(
  queueName: string,
  url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    for (const name of [queueName, `${queueName}${CALLBACK_QUEUE_SUFFIX}`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `bull:${name}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.unlink(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
