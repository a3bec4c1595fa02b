import cluster from 'node:cluster';
import { INestApplicationContext } from '@nestjs/common';
import { activeTelemetry } from '../../platform/telemetry/telemetry';
import { Draining } from '../health/draining';

/** How long closing (the requests in flight, then pools and Redis) may take before the process exits anyway. */
const CLOSE_GRACE_MS = 25_000;

/**
 * On SIGTERM/SIGINT: readiness turns false first (Draining) and stays so for `drainDelayMs` while requests
 * are still taken, so a load balancer that polls readiness stops sending new ones; then Nest runs its shutdown
 * hooks (the listener closes and waits for the requests in flight, then pools, Redis), then exit 0, so an
 * orchestrator sees a clean stop. A second signal, or a hang past the grace period, exits at once.
 */
export function closeOnSignals(
  app: INestApplicationContext,
  afterClose: () => Promise<void> = async () => {},
  drainDelayMs = 0,
): void {
  const GRACE_MS = drainDelayMs + CLOSE_GRACE_MS;
  let closing = false;
  // In a group of processes, Ctrl-C reaches every process of the terminal's group and the supervisor then
  // sends SIGTERM as well: that second signal would cut the graceful stop short. The supervisor decides.
  if (cluster.isWorker) process.on('SIGINT', () => undefined);
  for (const signal of cluster.isWorker ? (['SIGTERM'] as const) : (['SIGTERM', 'SIGINT'] as const)) {
    process.on(signal, () => {
      if (closing) process.exit(1);
      closing = true;
      setTimeout(() => process.exit(1), GRACE_MS).unref();
      draining(app)?.start();
      new Promise((resolve) => setTimeout(resolve, drainDelayMs))
        .then(() => app.close())
        .then(afterClose)
        // The spans of the last requests and jobs, still in the exporter's batch (tracing on only).
        .then(() =>
          activeTelemetry()
            ?.shutdown()
            .catch(() => undefined),
        )
        .then(
          () => process.exit(0),
          (error: unknown) => {
            console.error(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
            process.exit(1);
          },
        );
    });
  }
}

/** The API's readiness flag; the worker serves no readiness and has none. */
function draining(app: INestApplicationContext): Draining | null {
  try {
    return app.get(Draining, { strict: false });
  } catch {
    return null;
  }
}
