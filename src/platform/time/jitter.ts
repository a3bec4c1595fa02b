/**
 * The one jitter formula: a whole number of milliseconds drawn uniformly from
 * [floorMs, ceilingMs), so that work that failed together does not come back together. Used for a
 * queued forward's and a callback's backoff between attempts (full jitter, floor 0:
 * modules/forwarding/jobs/attempts/retry-policy.ts) and for putting off a job whose handler found the database or the
 * key store down (a floor: platform/job-queue/job-consumer.ts, modules/forwarding/jobs/forward-job.processor.ts).
 * `random` is injectable for tests.
 */
export function jitteredMs(floorMs: number, ceilingMs: number, random: () => number = Math.random): number {
  return floorMs + Math.floor(random() * (ceilingMs - floorMs));
}
