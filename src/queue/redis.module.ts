import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { closeRedis, REDIS } from './redis';
import { SharedCaches } from './shared-cache';

/**
 * One shared ioredis connection (or null when REDIS_URL is unset: the API then runs without the
 * queue). `maxRetriesPerRequest: null` is what BullMQ requires of connections it is handed.
 */
@Global()
@Module({})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  static forRoot(url: string | null): DynamicModule {
    return {
      module: RedisModule,
      providers: [
        {
          provide: REDIS,
          useFactory: () => (url ? new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false }) : null),
        },
        SharedCaches,
      ],
      exports: [REDIS, SharedCaches],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.redis) await closeRedis(this.redis);
  }
}
