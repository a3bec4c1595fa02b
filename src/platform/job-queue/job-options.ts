import type { DefaultJobOptions } from 'bullmq';

/** An enqueue that the engine has not acknowledged by then has failed: the request gets its 503 instead of waiting. */
export const ENQUEUE_TIMEOUT_MS = 1_000;

/**
 * Lock and stalled-check settings of a worker, on either engine: the lock is renewed every half of
 * `lockMs`, and a job whose lock has expired is found within another half.
 */
export function LOCK_OPTIONS(lockMs: number): { lockDuration: number; stalledInterval: number } {
  return { lockDuration: lockMs, stalledInterval: Math.max(500, Math.round(lockMs / 2)) };
}

/**
 * BullMQ appends every job's events (added, active, completed…) to a stream of 10,000 by default;
 * nothing here reads them (the job rows are the truth), so a short one is kept.
 */
export const MAX_LEN_EVENTS = 1_000;

/**
 * How long BullMQ keeps a failed job (it holds only our id and an attempt number): its failure is
 * worth a look; while it is kept, enqueueing the same job again is a no-op unless the failed copy is
 * replaced (EnqueueOptions.replaceFailed).
 */
const KEEP_FAILED_JOB_SECONDS = 3_600;

/**
 * The same on both engines. How many tries a job has, and its backoff, are set per job where it is
 * enqueued (EnqueueOptions.attempts): a queued forward's BullMQ job owns all its attempts
 * (docs/decisions/0124). A completed job is removed at once: the row holds everything, the claim (not BullMQ's id) is what
 * refuses a second run of an attempt, and keeping it costs on every completion (Redis trims its
 * completed set; PostgreSQL's age-based retention deletes with a cached generic plan that cannot use its
 * partial index, so every completion scanned all the queue's kept jobs: 25 ms each after 20,000
 * forwards, docs/benchmarks-history.md).
 */
export function JOB_OPTIONS(): DefaultJobOptions {
  return {
    removeOnComplete: true,
    removeOnFail: { age: KEEP_FAILED_JOB_SECONDS },
  };
}
