import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import {
  closeRedis,
  REDIS,
  REDIS_AVAILABILITY,
  RedisAvailability,
  RedisClient,
  RedisTopology,
  sharedRedis,
} from './redis';
import { SharedCaches } from './shared-cache';

/**
 * One shared ioredis connection (or null when REDIS_URL is unset: the API then runs without the
 * queue), and the RedisAvailability every connection of the process reports to.
 */
@Global()
@Module({})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisClient | null) {}

  static forRoot(url: string | null, topology: RedisTopology = { sentinel: null, cluster: null }): DynamicModule {
    return {
      module: RedisModule,
      providers: [
        {
          provide: REDIS_AVAILABILITY,
          useFactory: () => (url ? new RedisAvailability(url, topology.sentinel?.password ?? null) : null),
        },
        {
          provide: REDIS,
          inject: [REDIS_AVAILABILITY],
          useFactory: (availability: RedisAvailability | null) =>
            url && availability ? availability.watch('shared', sharedRedis(url, topology)) : null,
        },
        SharedCaches,
      ],
      exports: [REDIS, REDIS_AVAILABILITY, SharedCaches],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.redis) await closeRedis(this.redis);
  }
}
