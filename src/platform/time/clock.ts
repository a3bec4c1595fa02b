/**
 * The one owner of "now", as a provider so that tests can pin it. Two readings of the same clock:
 *
 * - `epochMs()`: now in this process, for what it decides itself (an expiry, a deadline, a TTL, a
 *   timestamp it writes). Durations measured for logs and metrics are not "now": they use
 *   performance.now().
 * - `now()`: now for a statement. Null (production) means the database's clock, `now()` in the query:
 *   the clock the records are stamped with, the same for every process. A test pins it so that records
 *   written near a minute boundary do not move to the next minute between writing and reading them.
 */
export interface Clock {
  epochMs(): number;
  now(): Date | null;
}

export const CLOCK = Symbol('CLOCK');

/** The production clock: this process's wall clock, and the database's in statements. */
export const SYSTEM_CLOCK: Clock = { epochMs: () => Date.now(), now: () => null };
