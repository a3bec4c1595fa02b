import { randomUUID } from 'node:crypto';
import type {
  ForwardJobsRepository,
  StoredResponse,
} from '../../../src/modules/forwarding/jobs/forward-jobs.repository';
import { ForwardJob, JobAttempt, JobStatus } from '../../../src/modules/forwarding/jobs/rows/forward-job.entity';
import { FORWARD_PLAN_VERSION, ForwardPlan } from '../../../src/modules/forwarding/request/forward-plan';
import { Timestamp } from '../../../src/platform/database/timestamp';
import type { FakeClock } from './clock';

/** The ForwardJobsRepository calls the queued path's worker makes. */
type WorkerCalls = Pick<
  ForwardJobsRepository,
  'claim' | 'find' | 'requeue' | 'finish' | 'recordLateOutcome' | 'leaseOf' | 'renewLeases' | 'openPlan'
>;

interface Row {
  job: ForwardJob;
  plan: ForwardPlan | null;
  response: StoredResponse | null;
  leaseExpiresAt: number | null;
}

/**
 * Job rows in memory, each transition with the condition its statement has (forward-job-statements.ts,
 * docs/decisions/0120): a claim only of a queued job waiting for exactly that attempt; FINISH and
 * REQUEUE only while the given attempt is the running job's last; a late outcome only into its own entry
 * while that entry has no outcome or was closed outcome-unknown. Reads return copies, as rows read
 * from a database are. Leases run on the test's clock.
 */
export class InMemoryForwardJobsRepository implements WorkerCalls {
  private readonly rows = new Map<string, Row>();
  /** Every transition that applied, in order, for assertions on what happened. */
  readonly transitions: Array<{ kind: 'claim' | 'requeue' | 'finish' | 'late'; jobId: string; attempt: number }> = [];

  constructor(
    private readonly clock: FakeClock,
    private readonly leaseMs: number,
  ) {}

  /** A queued job (attempts as given), with a plan unless `plan` is null. */
  add(fields: Partial<ForwardJob> = {}, plan: ForwardPlan | null = planFor(fields)): ForwardJob {
    const job = Object.assign(new ForwardJob(), {
      id: randomUUID(),
      merchantAccountId: 'merchant-1',
      status: 'queued',
      method: 'POST',
      targetUrl: 'https://target.example/pay',
      paymentMethodIds: [],
      authenticationIds: [],
      maxAttempts: 3,
      idempotencyKey: null,
      legacyIdempotencyKey: null,
      callbackUrl: null,
      attempts: [],
      nextAttemptAt: null,
      responseStatus: null,
      responseReceivedAt: null,
      responseErasedAt: null,
      responseErasedReason: null,
      ...fields,
    });
    this.rows.set(job.id, { job, plan, response: null, leaseExpiresAt: null });
    return copy(job);
  }

  /** The row as it is now (a copy). */
  row(jobId: string): ForwardJob {
    return copy(this.get(jobId).job);
  }

  response(jobId: string): StoredResponse | null {
    return this.get(jobId).response;
  }

  /** Another worker's claim of the job's next attempt: its lease runs for a lease period from now. */
  claimElsewhere(jobId: string): JobAttempt {
    const row = this.get(jobId);
    const entry = attemptEntry(row.job.attempts.length + 1, this.clock);
    this.applyClaim(row, entry);
    return entry;
  }

  claim(jobId: string, entry: JobAttempt): ReturnType<ForwardJobsRepository['claim']> {
    const row = this.rows.get(jobId);
    if (row?.job.status !== 'queued' || row.job.attempts.length !== entry.number - 1) return Promise.resolve(null);
    this.applyClaim(row, entry);
    return Promise.resolve({ job: copy(row.job), plan: row.plan });
  }

  find(jobId: string): Promise<ForwardJob | null> {
    const row = this.rows.get(jobId);
    return Promise.resolve(row ? copy(row.job) : null);
  }

  requeue(job: Pick<ForwardJob, 'id' | 'attempts'>, owner: string, nextAttemptAt: string): Promise<boolean> {
    const row = this.owned(job.id, owner);
    if (!row) return Promise.resolve(false);
    Object.assign(row.job, {
      status: 'queued',
      attempts: clone(job.attempts),
      nextAttemptAt: Timestamp.parse(nextAttemptAt),
    });
    row.leaseExpiresAt = null;
    this.transitions.push({ kind: 'requeue', jobId: job.id, attempt: job.attempts.length });
    return Promise.resolve(true);
  }

  finish(
    job: Pick<ForwardJob, 'id' | 'merchantAccountId' | 'attempts'>,
    owner: string,
    status: JobStatus,
    response: StoredResponse | null,
  ): Promise<boolean> {
    const row = this.owned(job.id, owner);
    if (!row) return Promise.resolve(false);
    Object.assign(row.job, {
      status,
      attempts: clone(job.attempts),
      nextAttemptAt: null,
      responseStatus: response?.status ?? null,
    });
    row.response = response;
    row.plan = null;
    row.leaseExpiresAt = null;
    this.transitions.push({ kind: 'finish', jobId: job.id, attempt: job.attempts.length });
    return Promise.resolve(true);
  }

  recordLateOutcome(jobId: string, entry: JobAttempt): Promise<boolean> {
    const row = this.rows.get(jobId);
    const current = row?.job.attempts[entry.number - 1];
    if (!row || current?.request_id !== entry.request_id) return Promise.resolve(false);
    if (current.duration_ms !== null && current.error_type !== 'outcome-unknown') return Promise.resolve(false);
    row.job.attempts[entry.number - 1] = { ...clone(entry), next_attempt_at: current.next_attempt_at };
    this.transitions.push({ kind: 'late', jobId, attempt: entry.number });
    return Promise.resolve(true);
  }

  leaseOf(jobId: string, requestId: string): ReturnType<ForwardJobsRepository['leaseOf']> {
    const row = this.rows.get(jobId);
    if (!row || row.job.status !== 'running' || row.job.attempts.at(-1)?.request_id !== requestId)
      return Promise.resolve(null);
    const expires = row.leaseExpiresAt;
    return Promise.resolve({
      expiresAt: expires === null ? 'none' : new Date(expires).toISOString(),
      remainingMs: expires === null ? 0 : Math.max(0, expires - this.clock.now()),
    });
  }

  renewLeases(attempts: ReadonlyMap<string, string>): Promise<string[]> {
    const lost: string[] = [];
    for (const [jobId, requestId] of attempts) {
      const row = this.owned(jobId, requestId);
      if (row) row.leaseExpiresAt = this.clock.now() + this.leaseMs;
      else lost.push(jobId);
    }
    return Promise.resolve(lost);
  }

  openPlan(job: Pick<ForwardJob, 'id'>): Promise<ForwardPlan | null> {
    return Promise.resolve(this.rows.get(job.id)?.plan ?? null);
  }

  private applyClaim(row: Row, entry: JobAttempt): void {
    Object.assign(row.job, { status: 'running', attempts: [...row.job.attempts, clone(entry)], nextAttemptAt: null });
    row.leaseExpiresAt = this.clock.now() + this.leaseMs;
    this.transitions.push({ kind: 'claim', jobId: row.job.id, attempt: entry.number });
  }

  /** The row while attempt `owner` is its running job's last (the statements' WHERE). */
  private owned(jobId: string, owner: string): Row | undefined {
    const row = this.rows.get(jobId);
    return row?.job.status === 'running' && row.job.attempts.at(-1)?.request_id === owner ? row : undefined;
  }

  private get(jobId: string): Row {
    const row = this.rows.get(jobId);
    if (!row) throw new Error(`no job ${jobId} in the fake store`);
    return row;
  }
}

/** An attempt without outcome, started now on the test's clock. */
export function attemptEntry(number: number, clock: FakeClock): JobAttempt {
  return {
    number,
    request_id: randomUUID(),
    started_at: new Date(clock.now()).toISOString(),
    duration_ms: null,
    status: null,
    error_type: null,
    next_attempt_at: null,
  };
}

/** A plan as a queued job stores it (no card, no authentication method; nothing local to a process). */
export function planFor(fields: Partial<ForwardJob> = {}): ForwardPlan {
  return {
    version: FORWARD_PLAN_VERSION,
    id: randomUUID(),
    apiKeyId: null,
    merchantAccountId: fields.merchantAccountId ?? 'merchant-1',
    configId: 'config-1',
    url: new URL(fields.targetUrl ?? 'https://target.example/pay'),
    method: (fields.method ?? 'POST') as ForwardPlan['method'],
    timeoutMs: 10_000,
    trusted: false,
    paymentMethodIds: [],
    checkoutSessionId: null,
    authenticationIds: [],
    merchantInitiated: false,
    passedHeaders: [['content-type', 'application/json']],
    headerTemplates: [],
    body: Buffer.from('{"amount":100}'),
    bodyEncoding: 'json',
  };
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Timestamps are immutable; the attempts are what a caller changes in place. */
function copy(job: ForwardJob): ForwardJob {
  return Object.assign(new ForwardJob(), job, { attempts: clone(job.attempts) });
}
