import { StatementBatcher } from '../database/statement-batcher';
import type { QueueBackend } from '../config/config';
import { activeTelemetry } from '../telemetry/telemetry';
import { RETRY_BACKOFF } from './backoff';
import type { EngineWorker, EngineWorkerOptions } from './engine';

/**
 * What a queued job's BullMQ job carries: the id of its row, and the number of the attempt its first try
 * is (a forward's BullMQ job runs that attempt and the next ones: attempt + attemptsMade), nothing else
 * of the request.
 */
export interface ForwardJobData {
  jobId: string;
  attempt: number;
}

export interface EnqueueOptions {
  /** Run no earlier than this many milliseconds from now (a retry's backoff). */
  delayMs?: number;
  /**
   * The attempt the job's first try runs (1 for a new forward). A forward, or a callback delivery, has
   * one BullMQ job for its whole life, whose id is its row's, so enqueueing it again is a no-op while
   * BullMQ keeps it (until it completes; an hour after it fails); the row's claim is what refuses a
   * second run of an attempt.
   */
  attempt?: number;
  /**
   * How many tries BullMQ gives the job (1 by default): the attempts left. Each try that throws
   * RetryAttempt is counted and the next scheduled after the delay it carries (RETRY_BACKOFF).
   */
  attempts?: number;
  /**
   * A copy that BullMQ keeps as failed is removed first, so the job runs again instead of the add being
   * a no-op for an hour: the housekeeping's re-enqueue of a row that is overdue while BullMQ gave up
   * on its job (a stalled job, a try that threw before its row recorded it). The claim still refuses
   * a second run of an attempt that ran.
   */
  replaceFailed?: boolean;
  /**
   * A copy of a callback delivery's job under a BullMQ id of its own (`<id>.<attempt>.<copy>`, letters and
   * digits), for a wake-up that must not be swallowed by the attempt's own job while BullMQ still holds
   * it (running, finishing): a webhook secret created just as a callback's try put itself off. Two
   * copies are harmless, the claim lets one run each attempt.
   */
  copy?: string;
  /**
   * The kind of job: a forward (FORWARD_JOB_NAME, the default) or a job-end callback delivery
   * (CALLBACK_JOB_NAME, whose id is the delivery row's, on the callback queue: CALLBACK_QUEUE).
   */
  name?: QueuedJobName;
}

/** Enqueueing was refused or timed out: the engine is down, or there is none. The route answers 503 with Retry-After. */
export class QueueUnavailableError extends Error {
  /** Seconds a caller is told to wait before asking again. */
  readonly retryAfterSeconds = 5;

  constructor(
    readonly backend: QueueBackend,
    reason: string,
  ) {
    super(`the ${backend === 'none' ? 'job queue is off' : `${backend} job queue is unavailable`}: ${reason}`);
    this.name = 'QueueUnavailableError';
  }
}

/**
 * The queue of queued forwards on whichever engine QUEUE_BACKEND chose. The API enqueues (never
 * waiting on a down engine) through the BullMQ Queue that BullModule registers (QueueModule); a
 * worker's ForwardJobProcessor (a WorkerHost, through a JobConsumer) consumes it with the settings consumer() gives.
 */
export abstract class ForwardQueue {
  abstract readonly backend: QueueBackend;

  /** Rejects with QueueUnavailableError within about a second when the engine cannot take the job. */
  abstract enqueue(jobId: string, options?: EnqueueOptions): Promise<void>;

  /** Whether an enqueue now is expected to succeed (the producer connection is up). */
  abstract isAvailable(): boolean;

  /**
   * A repeatable job `name` every `everyMs` (a BullMQ job scheduler): upserting it again from any
   * number of workers keeps one scheduler and one job per period.
   */
  abstract schedule(name: string, everyMs: number): Promise<void>;

  /**
   * Whether the engine may have lost its jobs since `markSwept()` was last called on it (Redis restarted
   * without its data, flushed, or a new one): the job rows must then be swept in full, not only the
   * overdue ones. Rejects while the engine is unreachable.
   */
  abstract mayHaveLostJobs(): Promise<boolean>;

  /** Records that the job rows were swept into the engine as it now is (see mayHaveLostJobs). */
  abstract markSwept(): Promise<void>;

  /**
   * The BullMQ queue name and Worker options of this process's consumer (a JobConsumer's): its
   * own connection (a blocking one on Redis, a pool on PostgreSQL), closed by close().
   */
  abstract consumer(concurrency: number, lockMs: number): ConsumerSettings;

  /**
   * Called once the consumer's Worker is made: the engine's own watch of it (the PostgreSQL probe on
   * its errors), `onReconnected` when the engine is back after a loss that may have emptied it (a Redis
   * restarted without persistence, schedulers included).
   */
  abstract consuming(worker: EngineWorker, onReconnected: () => void): Promise<void>;

  /** Closes the producer's queue and every connection made here (the consumer's after its Worker). Idempotent. */
  abstract close(): Promise<void>;
}

export interface ConsumerSettings {
  /** The BullMQ queue name: FORWARD_QUEUE_NAME, tests' own. */
  queueName: string;
  options: EngineWorkerOptions;
}

/**
 * The job-end callbacks' queue: a ForwardQueue facade of its own BullMQ queue (VAULT_CALLBACK_QUEUE) on
 * the same engine, consumed by the callbacks' WorkerHost (docs/decisions/0092).
 */
export const CALLBACK_QUEUE = Symbol('CALLBACK_QUEUE');

/** QUEUE_BACKEND=none: queued forwarding is off; the synchronous path is unaffected. */
export class NoForwardQueue extends ForwardQueue {
  readonly backend = 'none' as const;

  enqueue(): Promise<void> {
    return Promise.reject(new QueueUnavailableError('none', 'QUEUE_BACKEND is none'));
  }

  isAvailable(): boolean {
    return false;
  }

  schedule(): Promise<void> {
    return Promise.reject(new QueueUnavailableError('none', 'QUEUE_BACKEND is none'));
  }

  mayHaveLostJobs(): Promise<boolean> {
    return Promise.resolve(false);
  }

  async markSwept(): Promise<void> {}

  consumer(): ConsumerSettings {
    throw new Error('QUEUE_BACKEND is none: there is no queue to take jobs from');
  }

  consuming(): Promise<void> {
    return Promise.reject(new Error('QUEUE_BACKEND is none: there is no queue to take jobs from'));
  }

  async close(): Promise<void> {}
}

/** Job ids are ours (UUIDs); anything else would let a caller's text reach BullMQ's keys. */
const JOB_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * The BullMQ id of a job: its row's id (a forward's or a callback delivery's one BullMQ job for its whole
 * life), or a wake-up's copy `<id>.<attempt>.<copy>`.
 */
export function bullJobId(jobId: string, attempt: number, copy?: string): string {
  if (!JOB_ID.test(jobId)) throw new Error('a queued forward id must be 1–100 letters, digits, - or _');
  if (!Number.isInteger(attempt) || attempt < 1) throw new Error('attempt must be a whole number from 1');
  if (copy !== undefined && !/^[A-Za-z0-9]{1,20}$/.test(copy)) throw new Error('a copy is 1–20 letters or digits');
  // BullMQ refuses ':' in custom ids and purely numeric ones.
  return copy === undefined ? jobId : `${jobId}.${attempt}.${copy}`;
}

/** A scheduler's job carries nothing; typed as the queue's data, which only forwards' jobs are parsed as. */
export const SCHEDULED_DATA = {} as ForwardJobData;

/** The name of every forward's BullMQ job; a scheduler's jobs carry the scheduler's name instead. */
export const FORWARD_JOB_NAME = 'forward';
/** The name of a job-end callback's BullMQ job: `jobId` is its delivery row's id, `attempt` its first attempt. */
export const CALLBACK_JOB_NAME = 'callback';
type QueuedJobName = typeof FORWARD_JOB_NAME | typeof CALLBACK_JOB_NAME;

export function parseJobData(data: unknown): ForwardJobData {
  const { jobId, attempt } = (data ?? {}) as Partial<ForwardJobData>;
  if (typeof jobId !== 'string' || !JOB_ID.test(jobId) || !Number.isInteger(attempt))
    throw new Error('malformed forward job payload');
  return { jobId, attempt: attempt! };
}

/**
 * Removes the copy of a job that BullMQ keeps as failed (see EnqueueOptions.replaceFailed); any other
 * copy (waiting, delayed, running) is left alone, so the add that follows stays a no-op for it.
 */
export async function removeFailedCopy(
  queue: { getJobState(id: string): Promise<string>; remove(id: string): Promise<unknown> },
  id: string,
): Promise<void> {
  if ((await queue.getJobState(id)) === 'failed') await queue.remove(id);
}

/** The two calls of a BullMQ queue an enqueue needs, on either engine. */
interface JobAdder {
  add(name: string, data: ForwardJobData, opts: JobOpts): Promise<unknown>;
  addBulk(jobs: Array<{ name: string; data: ForwardJobData; opts: JobOpts }>): Promise<unknown>;
}

type JobOpts = {
  jobId: string;
  delay: number;
  attempts?: number;
  backoff?: { type: string };
  telemetry?: { metadata: string };
};

interface Enqueue {
  name: QueuedJobName;
  jobId: string;
  attempt: number;
  delayMs: number;
  attempts?: number;
  copy?: string;
  /** The trace context of whoever asked for the job (tracing on only; see EnqueueBatcher). */
  trace?: string;
}

/**
 * With tracing on, each enqueue takes its caller's trace context along: the batch it joins runs in
 * whichever caller's context started it, and one addBulk would otherwise give every job the first
 * caller's trace. The context goes in the job's options (BullMQ's telemetry metadata), which both
 * engines store with the job, so the worker's span is a child of the request that enqueued it.
 */
class EnqueueBatcher extends StatementBatcher<Enqueue, void> {
  override run(item: Enqueue): Promise<void> {
    return super.run({ ...item, trace: item.trace ?? activeTelemetry()?.capture() });
  }
}

/**
 * Enqueues made while one is in flight go together in one addBulk (one MULTI on Redis, one
 * `add_jobs_bulk` call on PostgreSQL): under load the API's 202s cost a fraction of a round trip each.
 * Any failure fails the batch (an outage).
 */
export function batchedEnqueues(queue: () => JobAdder): StatementBatcher<Enqueue, void> {
  const job = (item: Enqueue) => ({
    name: item.name,
    data: { jobId: item.jobId, attempt: item.attempt },
    opts: {
      jobId: bullJobId(item.jobId, item.attempt, item.copy),
      delay: item.delayMs,
      ...(item.attempts && item.attempts > 1 ? { attempts: item.attempts, backoff: { type: RETRY_BACKOFF } } : {}),
      ...(item.trace ? { telemetry: { metadata: item.trace } } : {}),
    },
  });
  return new EnqueueBatcher({
    isOutage: () => true,
    one: async (item) => {
      const { name, data, opts } = job(item);
      // BullMQ's add() puts the active context in the job: its caller's, not that of the batch before.
      const telemetry = activeTelemetry();
      await (telemetry
        ? telemetry.within(item.trace, () => queue().add(name, data, opts))
        : queue().add(name, data, opts));
    },
    many: async (items) => {
      await queue().addBulk(items.map(job));
      return items.map(() => undefined);
    },
  });
}
