import cluster from 'node:cluster';
import { INestApplicationContext } from '@nestjs/common';
import { activeTelemetry } from '../../platform/telemetry/telemetry';

/**
 * On SIGTERM/SIGINT: stop taking work, let Nest run its shutdown hooks (close HTTP, pools, Redis),
 * then exit 0, so an orchestrator sees a clean stop. A second signal, or a hang past the grace period,
 * exits at once.
 */
export function closeOnSignals(app: INestApplicationContext, afterClose: () => Promise<void> = async () => {}): void {
  const GRACE_MS = 25_000;
  let closing = false;
  // In a group of processes, Ctrl-C reaches every process of the terminal's group and the supervisor then
  // sends SIGTERM as well: that second signal would cut the graceful stop short. The supervisor decides.
  if (cluster.isWorker) process.on('SIGINT', () => undefined);
  for (const signal of cluster.isWorker ? (['SIGTERM'] as const) : (['SIGTERM', 'SIGINT'] as const)) {
    process.on(signal, () => {
      if (closing) process.exit(1);
      closing = true;
      setTimeout(() => process.exit(1), GRACE_MS).unref();
      app
        .close()
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
