/**
 * "Now" for answers that depend on the current time, as a provider so that tests can pin it: a test
 * near a minute boundary would otherwise see its records move to the next minute between writing
 * and reading them. `now()` null (production) means the database's clock, `now()` in the query:
 * the clock the records are stamped with, the same for every process.
 */
export interface Clock {
  now(): Date | null;
}

export const CLOCK = Symbol('CLOCK');

export const DATABASE_CLOCK: Clock = { now: () => null };
