import { DynamicModule, Global, Module } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS, REDIS_AVAILABILITY, RedisAvailability } from '../../src/platform/redis/redis';

/** The Redis client and availability tracker a test made itself, where the app's RedisModule would make its own. */
@Global()
@Module({})
export class TestRedisModule {
  static forRoot(redis: Redis | null, availability: RedisAvailability | null): DynamicModule {
    return {
      module: TestRedisModule,
      providers: [
        { provide: REDIS, useValue: redis },
        { provide: REDIS_AVAILABILITY, useValue: availability },
      ],
      exports: [REDIS, REDIS_AVAILABILITY],
    };
  }
}
