import 'reflect-metadata';
// First: OpenTelemetry, when OTEL_EXPORTER_OTLP_ENDPOINT is set, must start before what it instruments loads.
import './platform/telemetry/api-tracing';
import { Logger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { createApiApp } from './app/api-app';
import { loadConfigOrExit } from './app/bootstrap/load-config';
import { reportReady, runProcessGroup } from './app/bootstrap/processes';
import { closeOnSignals } from './app/bootstrap/shutdown';
import { runMigrations } from './platform/database/migrate';
import { ForwardQueue } from './platform/job-queue/forward-queue';
import { resolveDatabase } from './platform/database/resolve-database';
import type { AppConfig } from './platform/config/config';

async function main(config: AppConfig): Promise<void> {
  const database = await resolveDatabase(config, 'api');
  const app = await createApiApp({ config, databaseUrl: database.url });
  const logger = app.get(Logger);
  if (database.embedded) {
    logger.warn(
      `No DATABASE_URL: using an embedded PostgreSQL with its data in ${database.embedded.dataPath}, listening on ` +
        `${new URL(database.embedded.url).host} (development only; started and stopped with this process)`,
    );
  }
  const applied = await runMigrations(app.get(DataSource));
  if (applied.length > 0) logger.log(`Applied migrations: ${applied.join(', ')}`);
  const queue = app.get(ForwardQueue);
  if (queue.backend === 'none')
    logger.warn(
      'Queued forwarding is off (QUEUE_BACKEND=none, or the job queue could not start on the embedded database); ' +
        'synchronous forwarding works.',
    );
  else
    logger.log(
      `Queued forwarding runs on ` +
        `${queue.backend}${database.embedded && queue.backend === 'postgres' ? ' (the embedded PostgreSQL, development only)' : ''}.`,
    );
  closeOnSignals(app, async () => database.embedded?.stop(), config.shutdownDrainDelaySeconds * 1000);
  await app.listen({ port: config.port, host: config.host });
  // The runtime in the first line an operator reads: a card vault must be on a Node.js line that still gets
  // security fixes (docs/operations.md).
  logger.log(
    `API listening on ${await app.getUrl()} (Node.js ${process.version}; OpenAPI at /openapi.json, docs at /docs)`,
  );
  reportReady();
}

const config = loadConfigOrExit();
runProcessGroup('api', config.webConcurrency, config, () => main(config));
