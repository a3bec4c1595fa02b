/**
 * BullMQ's own ceiling for bench:queue (issue 49): BENCH_NOOP_JOBS jobs added to a fresh queue beforehand, then
 * one Worker, as ours runs (WORKER_CONCURRENCY 32 by default, our lock and job options, completed jobs removed),
 * with a processor that does nothing; reports to its parent the jobs completed per second from the Worker's start
 * to the last one completed. BENCH_NOOP_ENGINE is redis (REDIS_URL) or postgres (BullMQ's schema in
 * DATABASE_URL, through our pools). What our queued forward completes per second is read against this.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { EngineQueue, EngineWorker } from '../src/platform/job-queue/engine';
import { JOB_OPTIONS, LOCK_OPTIONS } from '../src/platform/job-queue/job-options';
import { PostgresPools } from '../src/platform/job-queue/postgres-pools';

const JOBS = Number(process.env.BENCH_NOOP_JOBS ?? 20_000);
const CONCURRENCY = Number(process.env.WORKER_CONCURRENCY ?? 32);
const ENGINE = process.env.BENCH_NOOP_ENGINE === 'postgres' ? 'postgres' : 'redis';
/** Jobs per addBulk while the queue is filled. */
const CHUNK = 1_000;

async function main(): Promise<void> {
  const name = `bench-noop-${randomUUID()}`;
  const pools =
    ENGINE === 'postgres'
      ? new PostgresPools({ databaseUrl: process.env.DATABASE_URL!, role: 'worker', connectionTimeoutMillis: 5_000 }, 2)
      : null;
  const redis = ENGINE === 'redis' ? new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null }) : null;
  await pools?.migrate();
  const queue = new EngineQueue(name, {
    engine: ENGINE,
    connection: pools ? pools.producer() : redis,
    defaultJobOptions: JOB_OPTIONS(),
  });
  for (let added = 0; added < JOBS; added += CHUNK) {
    const count = Math.min(CHUNK, JOBS - added);
    await queue.addBulk(
      Array.from({ length: count }, (_, i) => ({
        name: 'noop',
        data: { n: added + i },
        opts: { jobId: randomUUID() },
      })),
    );
  }
  let completed = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const started = performance.now();
  const worker = new EngineWorker(name, async () => undefined, {
    engine: ENGINE,
    connection: pools ? pools.worker(1 + Math.min(20, Math.max(4, Math.ceil(CONCURRENCY / 3)))) : redis!.duplicate(),
    concurrency: CONCURRENCY,
    ...LOCK_OPTIONS(10_000),
  });
  worker.on('completed', () => {
    if (++completed === JOBS) done();
  });
  await finished;
  const seconds = (performance.now() - started) / 1000;
  await worker.close();
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await pools?.close();
  redis?.disconnect();
  // The figure, then the exit (a connection BullMQ was given stays open after its close).
  process.send?.({ jobsPerSecond: JOBS / seconds, seconds }, () => process.exit(0));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
