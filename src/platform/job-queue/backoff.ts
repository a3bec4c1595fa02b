/**
 * How long a job of either queue (forwards, callbacks) waits before its next try: one place, so both
 * back off alike.
 */

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
