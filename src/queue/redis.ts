import type Redis from 'ioredis';

/** The shared ioredis connection (RedisModule), or null when REDIS_URL is unset. */
export const REDIS = Symbol('REDIS');

/** QUIT waits for a connection that may never come (Redis down); then just drop the socket. */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}
