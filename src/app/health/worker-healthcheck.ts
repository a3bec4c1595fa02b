import { statSync } from 'node:fs';
import { SYSTEM_CLOCK } from '../../platform/time/clock';
import { HEARTBEAT_INTERVAL_MS } from './worker-heartbeat.constants';

/**
 * The worker container's health check: `node dist/app/health/worker-healthcheck.js` exits 0 when the
 * worker wrote WORKER_HEARTBEAT_FILE within the last three heartbeats, 1 otherwise. No Nest and no
 * connections of its own: it runs every few seconds beside the worker.
 */
function check(file: string | undefined): string | null {
  if (!file) return 'WORKER_HEARTBEAT_FILE is unset';
  const stat = statSync(file, { throwIfNoEntry: false });
  if (!stat) return `no heartbeat yet (${file} does not exist)`;
  const age = SYSTEM_CLOCK.epochMs() - stat.mtimeMs;
  return age > 3 * HEARTBEAT_INTERVAL_MS ? `last heartbeat ${Math.round(age / 1000)} s ago` : null;
}

const problem = check(process.env.WORKER_HEARTBEAT_FILE);
if (problem) {
  process.stderr.write(`unhealthy: ${problem}\n`);
  process.exit(1);
}
