import { ConfigError } from '../config/env';
import { TelemetryRole, telemetryConfig } from '../config/telemetry-config';

/**
 * Starts OpenTelemetry tracing for an entry point when OTEL_EXPORTER_OTLP_ENDPOINT is set, and loads
 * nothing of it otherwise. It must run before the modules it instruments (http, pg, ioredis, undici)
 * are first required, so each entry point imports a file that calls it (api-tracing.ts,
 * worker-tracing.ts) before any other of its imports. In a group of processes (WEB_CONCURRENCY,
 * WORKER_PROCESSES) every process runs this: each has its own SDK and exporter.
 */
export function startTelemetry(role: TelemetryRole): void {
  let config;
  try {
    config = telemetryConfig(process.env, role);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Configuration error: ${error.message}`);
    process.exit(1);
  }
  if (!config) return;
  // Required here, not imported at the top: with tracing off not one OpenTelemetry module is loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startSdk } = require('./sdk') as typeof import('./sdk');
  startSdk(config);
}
