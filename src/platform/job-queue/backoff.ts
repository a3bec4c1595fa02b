/**
 * How long a job of either queue (forwards, callbacks) waits before its next try: one place, so both
 * back off alike.
 */

import { jitteredMs } from '../time/jitter';

export const MAX_BACKOFF_MS = 5 * 60_000;

/**
 * A queued forward or a callback whose attempt the vault's key store (the HSM) stopped before anything
 * was sent (its plan, cards, message or webhook secret did not open) is put off by this much plus up to
 * as much again of jitter, its tries untouched: as for a database outage (QueueWorkerHost,
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
