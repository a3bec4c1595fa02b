import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DestinationStream } from 'pino';
import { Clock, CLOCK, SYSTEM_CLOCK } from '../platform/time/clock';
import { AppConfig } from '../platform/config/config';
import { ConfigModule } from '../platform/config/config.module';
import { dataSourceOptions } from '../platform/database/data-source';
import { DatabaseProbe } from '../platform/database/database-probe';
import { Sql } from '../platform/database/sql';
import { LoggingModule } from '../platform/logging/logging.module';
import { MetricsModule } from '../platform/metrics/metrics.module';
import { RedisModule } from '../platform/redis/redis.module';

/** No query of the API or the worker should take this long; past it the database counts as unavailable. */
const API_QUERY_TIMEOUT_MS = 5_000;

export interface CoreOptions {
  config: AppConfig;
  /** The resolved database URL: DATABASE_URL, or the embedded server's. */
  databaseUrl: string;
  /** Log destination; stdout by default. */
  logStream?: DestinationStream;
  /** Process name, shown to PostgreSQL as application_name. */
  role: 'api' | 'worker' | 'cli';
  /** "Now" of time-dependent reads; the database's clock unless a test pins it. */
  clock?: Clock;
}

/**
 * What every entry point shares: typed config, logging, the database and Redis. The API adds HTTP
 * features on top (ApiModule), the worker adds queue processors (WorkerModule), the CLI neither.
 */
@Module({})
export class CoreModule {
  static forRoot(options: CoreOptions): DynamicModule {
    const { config } = options;
    return {
      module: CoreModule,
      // Shared infrastructure every feature may inject without importing it again.
      global: true,
      providers: [Sql, DatabaseProbe, { provide: CLOCK, useValue: options.clock ?? SYSTEM_CLOCK }],
      exports: [Sql, DatabaseProbe, CLOCK],
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot({ level: config.logLevel, stream: options.logStream, http: options.role === 'api' }),
        TypeOrmModule.forRoot({
          ...dataSourceOptions({
            url: options.databaseUrl,
            poolSize: config.databasePoolSize,
            applicationName: `vault-forward-${options.role}`,
            queryTimeoutMs: options.role === 'cli' ? undefined : API_QUERY_TIMEOUT_MS,
          }),
          // Each feature module registers its own entities (TypeOrmModule.forFeature), so the database
          // layer lists none and an entry point maps the entities of the modules it loads.
          autoLoadEntities: true,
        }),
        RedisModule.forRoot(config.redisUrl, { sentinel: config.redisSentinel, cluster: config.redisCluster }),
        MetricsModule.forRoot(options.role !== 'cli'),
      ],
    };
  }
}
