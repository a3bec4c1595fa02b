import 'reflect-metadata';
// First: OpenTelemetry, when OTEL_EXPORTER_OTLP_ENDPOINT is set, must start before what it instruments loads.
import './platform/telemetry/worker-tracing';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppLogger } from './platform/logging/app-logger';
import { loadConfigOrExit } from './app/bootstrap/load-config';
import { reportReady, runProcessGroup } from './app/bootstrap/processes';
import { closeOnSignals } from './app/bootstrap/shutdown';
import { WorkerModule } from './app/worker.module';
import type { AppConfig } from './platform/config/config';
import { REDIS, RedisClient } from './platform/redis/redis';

/**
 * The queue worker entry point: an application context with no HTTP server, scaled apart from the
 * API. It needs the shared PostgreSQL and Redis; the embedded database is the API's alone.
 */
async function main(config: AppConfig): Promise<void> {
  if (!config.databaseUrl) {
    console.error(
      'Configuration error: DATABASE_URL: the worker needs the shared PostgreSQL (the embedded one lives inside the API process)',
    );
    process.exit(1);
  }
  if (config.queueBackend === 'none') {
    console.error('Configuration error: QUEUE_BACKEND: is none, so there is no queue for the worker to consume');
    process.exit(1);
  }
  const app = await NestFactory.createApplicationContext(
    WorkerModule.forRoot({ config, databaseUrl: config.databaseUrl }),
    {
      bufferLogs: true,
    },
  );
  app.useLogger(app.get(AppLogger));
  closeOnSignals(app);
  await app.init();
  await app.get<RedisClient | null>(REDIS)?.ping();
  app
    .get(Logger)
    .log(
      `Worker connected to PostgreSQL${config.redisUrl ? ' and Redis' : ''}; job queue on ${config.queueBackend}; ` +
        `Node.js ${process.version}; waiting for jobs.`,
    );
  reportReady();
}

const config = loadConfigOrExit();
runProcessGroup('worker', config.workerProcesses, config, () => main(config));
