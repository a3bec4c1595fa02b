import { DynamicModule, ForwardReference, Type } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { createApiApp } from '../../src/app/api-app';
import { Clock } from '../../src/platform/time/clock';
import { AppConfig, loadConfig } from '../../src/platform/config/config';
import { LogCapture } from './log-capture';
import { testDataDir } from './temp-data-dir';
import { TEST_LEDGER_KEY } from './ledger-key';
import { testRedisUrl } from './test-services';

export interface TestApp {
  app: NestFastifyApplication;
  /** Base URL of the real listening server, e.g. http://127.0.0.1:41234 */
  url: string;
  logs: LogCapture;
  db: DataSource;
  config: AppConfig;
  get<T>(type: Type<T> | symbol | string): T;
  close(): Promise<void>;
}

/** Fixed test master keys (never used outside tests): k1 is current unless a test says otherwise. */
export const TEST_MASTER_KEY_1 = `test-k1:${Buffer.alloc(32, 1).toString('base64')}`;
export const TEST_MASTER_KEY_2 = `test-k2:${Buffer.alloc(32, 2).toString('base64')}`;
const TEST_VAULT_MASTER_KEYS = TEST_MASTER_KEY_1;

/** The run's forward queue (global setup names it; the teardown drops it) unless a test names its own. */
function runQueue(): Record<string, string> {
  return process.env.TEST_QUEUE_NAME ? { FORWARD_QUEUE_NAME: process.env.TEST_QUEUE_NAME } : {};
}

export function testConfig(overrides: Record<string, string> = {}): AppConfig {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  if (!databaseUrl) throw new Error('TEST_DATABASE_URL is unset: run e2e tests through jest (global setup)');
  return loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: testDataDir(),
    DATABASE_URL: databaseUrl,
    REDIS_URL: testRedisUrl(),
    LOG_LEVEL: 'info',
    DATABASE_POOL_SIZE: '4',
    CURSOR_SECRET: 'test-cursor-secret-not-for-production-0123456789',
    VAULT_MASTER_KEYS: TEST_VAULT_MASTER_KEYS,
    LEDGER_SIGNING_KEY: TEST_LEDGER_KEY,
    ...runQueue(),
    ...overrides,
  });
}

/**
 * The whole environment of a compiled entry point (`dist/main.js`, `dist/worker.js`) run against the
 * run's database and Redis: nothing inherited but PATH.
 */
export function entryPointEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH!,
    DATA_DIR: testDataDir(),
    DATABASE_URL: process.env.TEST_DATABASE_URL!,
    REDIS_URL: testRedisUrl(),
    VAULT_MASTER_KEYS: TEST_MASTER_KEY_1,
    LEDGER_SIGNING_KEY: TEST_LEDGER_KEY,
    LOG_LEVEL: 'info',
    ...runQueue(),
    ...overrides,
  };
}

/**
 * Boots the API exactly as `npm start` does (same factory) against the run's database, listening on
 * a free port of 127.0.0.1, with its log lines captured.
 */
export async function startTestApp(
  options: {
    env?: Record<string, string>;
    imports?: Array<Type | DynamicModule | ForwardReference>;
    /** Pins "now" of time-dependent reads (src/platform/time/clock.ts); the database's clock by default. */
    clock?: Clock;
  } = {},
): Promise<TestApp> {
  const config = testConfig(options.env);
  const logs = new LogCapture();
  const app = await createApiApp(
    { config, databaseUrl: config.databaseUrl!, logStream: logs, clock: options.clock },
    { imports: options.imports },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = await app.getUrl();
  return {
    app,
    url: url.replace('[::1]', '127.0.0.1'),
    logs,
    db: app.get(DataSource),
    config,
    get: <T>(type: Type<T> | symbol | string) => app.get<T>(type),
    close: () => app.close(),
  };
}
