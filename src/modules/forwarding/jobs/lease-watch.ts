import { PutOff } from '../../../platform/job-queue/backoff';
import type { ForwardJobsRepository } from './forward-jobs.repository';
import type { Clock } from '../../../platform/time/clock';

/** Claims of unknown outcome, and lapsed leases seen, remembered at most (the oldest go first). */
const MAX_REMEMBERED = 10_000;
/** Added to a live owner's remaining lease before its job is looked at again, so the lease has surely lapsed or been renewed. */
const LEASE_MARGIN_MS = 250;

/**
 * Another worker's attempt owns the job (its lease runs, or lapsed too recently to tell): this
 * delivery is put off by `delayMs` without a try, and looks again then.
 */
export class JobOwnedElsewhereError extends PutOff {
  constructor(delayMs: number) {
    super(delayMs, 'the job is running in another worker, under its lease');
  }
}

/**
 * The row's lease as the truth of who owns a running attempt (docs/decisions/0120): what a worker
 * delivered another worker's running attempt asks before it may close it.
 */
export class LeaseWatch {
  /**
   * Lapsed leases of other workers' attempts as this worker first saw them (by request_id): the lease's
   * stored expiry and when it was seen. The attempt's owner is taken for gone only when the same lease
   * is still there, lapsed, a whole lease period later: a live owner cut off from the database renews
   * within half a lease of its return, so an outage of any length does not make it look gone.
   */
  private readonly lapsed = new Map<string, { expiresAt: string; seenAt: number }>();

  constructor(
    private readonly store: Pick<ForwardJobsRepository, 'leaseOf'>,
    /** QUEUE_LOCK_DURATION_MS: how long a lease lasts unrenewed. */
    private readonly leaseMs: number,
    private readonly clock: Clock,
  ) {}

  /**
   * How long until attempt `requestId` of a running job may be taken for gone: its lease's remainder
   * (plus a margin) while it runs; once lapsed, a whole lease period from when this worker first saw
   * that same lapsed lease; 0 when it has stayed lapsed that long; null when the attempt no longer owns
   * the job (it ended, or was closed meanwhile).
   */
  async ownerGoneIn(jobId: string, requestId: string): Promise<number | null> {
    const lease = await this.store.leaseOf(jobId, requestId);
    if (!lease) {
      this.lapsed.delete(requestId);
      return null;
    }
    if (lease.remainingMs > 0) {
      this.lapsed.delete(requestId);
      return lease.remainingMs + LEASE_MARGIN_MS;
    }
    const now = this.clock.epochMs();
    const seen = this.lapsed.get(requestId);
    if (!seen || seen.expiresAt !== lease.expiresAt) {
      remember(this.lapsed, requestId, { expiresAt: lease.expiresAt, seenAt: now });
      return this.leaseMs + LEASE_MARGIN_MS;
    }
    const left = seen.seenAt + this.leaseMs - now;
    if (left > 0) return left + LEASE_MARGIN_MS;
    this.lapsed.delete(requestId);
    return 0;
  }
}

/** Sets `key` in a map bounded to MAX_REMEMBERED entries, the oldest going first. */
export function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  if (map.size >= MAX_REMEMBERED) map.delete(map.keys().next().value!);
  map.set(key, value);
}
