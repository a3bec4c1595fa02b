/**
 * How long a job of either queue (forwards, callbacks) waits before its next delivery, a counted try
 * (RetryAttempt, BullMQ's backoff strategy) or a put-off that is no try (PutOff, an outage: BullMQ's
 * moveToDelayed + DelayedError, JobConsumer.run): one place, so both queues and both kinds agree.
 */

import { isDatabaseUnavailable } from '../problem/database-errors';
import { jitteredMs } from '../time/jitter';

export const MAX_BACKOFF_MS = 5 * 60_000;

/**
 * A queued forward or a callback whose attempt the vault's key store (the HSM) stopped before anything
 * was sent (its plan, cards, message or webhook secret did not open) is put off by this much plus up to
 * as much again of jitter, its tries untouched: as for a database outage (job-consumer.ts,
 * docs/decisions/0056 and 0088).
 */
const KEY_STORE_OUTAGE_DELAY_MS = 2_000;

export function keyStoreOutageDelayMs(): number {
  return jitteredMs(KEY_STORE_OUTAGE_DELAY_MS, 2 * KEY_STORE_OUTAGE_DELAY_MS);
}

/**
 * Exponential backoff with full jitter (a uniform wait in [0, min(cap, base·2^(n-1)))), unless the
 * downstream said when (Retry-After), which is honoured up to the cap. `attempt` is the number of
 * the attempt that just failed.
 */
export function backoffMs(
  attempt: number,
  baseMs: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== null) return Math.min(MAX_BACKOFF_MS, Math.max(0, retryAfterMs));
  const ceiling = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(attempt - 1, 30));
  return jitteredMs(0, ceiling, random);
}

/** The name of the one backoff strategy of both queues' jobs: the Worker's `settings.backoffStrategy` (retryBackoff). */
export const RETRY_BACKOFF = 'vault-retry';

/**
 * Thrown by a handler whose attempt was tried (its row records it) and is to be tried again after
 * `delayMs`: BullMQ counts the attempt and schedules the next with this very delay (retryBackoff), so
 * the row's next_attempt_at and BullMQ's delayed job agree.
 */
export class RetryAttempt extends Error {
  constructor(readonly delayMs: number) {
    super('the attempt is tried again after its backoff');
    this.name = 'RetryAttempt';
  }
}

/**
 * BullMQ's backoff for both queues: the delay the handler decided (RetryAttempt); any other error (a
 * handler's bug, or the engine's own database down while putting a job off) backs off like a retry
 * (`backoffMs` from `baseMs`).
 */
export function retryBackoff(baseMs: number): (attemptsMade: number, type?: string, error?: Error) => number {
  return (attemptsMade, _type, error) =>
    error instanceof RetryAttempt ? Math.max(0, Math.round(error.delayMs)) : backoffMs(attemptsMade, baseMs, null);
}

/**
 * A job whose handler found the database unreachable is put off by this much (plus up to as much
 * again of jitter, so a backlog does not come back all at once), its BullMQ tries untouched.
 *
 * The jitter is the retry policy's one formula (platform/time/jitter.ts), with a floor where the backoff
 * between attempts has none: a wait of ~0 ms would run the job again at once against a database that
 * is still down, a busy loop through the worker's slots (each turn a failed database call). Nor does
 * it grow with the attempt, since an outage is not an attempt (docs/decisions/0056, 0070).
 */
const DATABASE_OUTAGE_DELAY_MS = 2_000;

/**
 * Thrown by a handler whose job cannot be tried now and is no try: put off by `delayMs` (BullMQ's
 * delayed set, its tries untouched), as a database outage is (putOffDelay).
 */
export class PutOff extends Error {
  constructor(
    readonly delayMs: number,
    message = 'the job is put off without a try',
  ) {
    super(message);
    this.name = 'PutOff';
  }
}

/**
 * Whether a handler's error means "try later, this was not a try": the milliseconds to put the job off
 * by, or null for an error BullMQ counts. A database outage of any length must delay jobs, not use up
 * their tries and strand them in the failed set (docs/decisions/0056).
 */
export function putOffDelay(error: unknown): number | null {
  if (error instanceof PutOff) return error.delayMs;
  return isDatabaseUnavailable(error) ? jitteredMs(DATABASE_OUTAGE_DELAY_MS, 2 * DATABASE_OUTAGE_DELAY_MS) : null;
}
