import { Logger } from '@nestjs/common';
import {
  createPostgresBackend,
  JobProgress,
  PostgresConnectionOptions,
  PostgresQueueBackend,
  Queue,
  withBackend,
  Worker,
} from 'bullmq';
import { Client } from 'pg';
import {
  batchedEnqueues,
  bullJobId,
  dispatch,
  EnqueueOptions,
  ForwardJobData,
  ForwardJobHandler,
  ForwardQueue,
  FORWARD_JOB_NAME,
  ProcessOptions,
  QueueUnavailableError,
  removeFailedCopy,
  SCHEDULED_DATA,
} from './forward-queue';

import { JOB_OPTIONS, LOCK_OPTIONS, MAX_LEN_EVENTS } from './job-options';
import { withTimeout } from '../common/with-timeout';

export interface PostgresForwardQueueOptions {
  databaseUrl: string;
  queueName: string;
  /** BullMQ's schema, which holds its tables and functions; `bullmq` unless a test isolates itself. */
  schema?: string;
  retryBaseMs: number;
  role: 'api' | 'worker';
  /**
   * The embedded database (PGlite behind pglite-socket) serves every connection from one session and
   * ignores per-connection start-up options, so BullMQ's `-c search_path=bullmq` never applies there.
   * Then the schema is appended to that session's search_path instead (docs/decisions/0053). That one
   * session also serialises every statement, so an enqueue there is given EMBEDDED_ENQUEUE_TIMEOUT_MS.
   */
  sharedSession?: boolean;
}

/**
 * An enqueue here shares the fate of the request's own queries: PostgreSQL down means the API is down
 * anyway, so the budget is the API's query timeout rather than Redis's one second, and it includes
 * the wait for one of the producer's few pooled connections during a burst.
 */
const POSTGRES_ENQUEUE_TIMEOUT_MS = 5_000;

/** PGlite runs one statement at a time for every connection; a burst of enqueues waits its turn. */
const EMBEDDED_ENQUEUE_TIMEOUT_MS = 15_000;

/**
 * The embedded database's wake-up: a no-op scheduler job this often. BullMQ's PostgreSQL worker blocks
 * on LISTEN until the next delayed job is due (up to an hour) and relies on the producer's NOTIFY to
 * wake it; pglite-socket multiplexes every connection onto PGlite's one session, and a NOTIFY sent
 * there does not reliably reach the worker's LISTEN connection, so a queued forward could wait for the
 * next housekeeping run. A due scheduler job bounds that wait. Only with `sharedSession` (development).
 */
export const EMBEDDED_WAKE_JOB = 'embedded-worker-wake';
const EMBEDDED_WAKE_EVERY_MS = 1_000;

/** Between probes of the database while the producer is unavailable. */
const PROBE_INTERVAL_MS = 1_000;
/** A job id no job has (ours are `<uuid>.<attempt>`): looking its state up is one indexed read through the queue's pool. */
const PROBE_JOB_ID = 'availability-probe';

const { Queue: PgQueue, Worker: PgWorker } = withBackend(createPostgresBackend);

/**
 * BullMQ on PostgreSQL: its own schema (`bullmq`) in the application's database, created and
 * upgraded by BullMQ's migrations, which run in one transaction under BullMQ's advisory lock, so
 * any number of API and worker processes may start at once. An enqueue gives up after
 * POSTGRES_ENQUEUE_TIMEOUT_MS, pool wait included.
 */
export class PostgresForwardQueue extends ForwardQueue {
  readonly backend = 'postgres' as const;
  private readonly logger = new Logger('ForwardQueue');
  private readonly queue: Queue<
    ForwardJobData,
    unknown,
    string,
    ForwardJobData,
    unknown,
    string,
    PostgresQueueBackend,
    PostgresConnectionOptions
  >;
  private worker: Worker<
    ForwardJobData,
    unknown,
    string,
    PostgresQueueBackend,
    JobProgress,
    PostgresConnectionOptions
  > | null = null;
  private available = true;
  /** The next probe while unavailable (probeUntilBack). */
  private probe: NodeJS.Timeout | null = null;
  private closed: Promise<void> | null = null;
  private readonly enqueueTimeoutMs: number;
  private readonly adds = batchedEnqueues(() => this.queue);

  constructor(private readonly options: PostgresForwardQueueOptions) {
    super();
    this.enqueueTimeoutMs = options.sharedSession ? EMBEDDED_ENQUEUE_TIMEOUT_MS : POSTGRES_ENQUEUE_TIMEOUT_MS;
    this.queue = new PgQueue<ForwardJobData>(options.queueName, {
      connection: this.connection(options.sharedSession ? 1 : options.role === 'api' ? 4 : 2),
      defaultJobOptions: JOB_OPTIONS(options.retryBaseMs),
      streams: { events: { maxLen: MAX_LEN_EVENTS } },
    });
    this.queue.on('error', (error: Error) => this.unavailable(error));
  }

  /** Applies BullMQ's migrations (idempotent, under its advisory lock) and checks the schema. */
  async start(): Promise<void> {
    await this.queue.waitUntilReady();
    if (this.options.sharedSession) await this.joinSharedSearchPath();
  }

  async enqueue(jobId: string, options: EnqueueOptions = {}): Promise<void> {
    const attempt = options.attempt ?? 1;
    bullJobId(jobId, attempt);
    try {
      if (options.replaceFailed) await withTimeout(removeFailedCopy(this.queue, jobId, attempt), this.enqueueTimeoutMs);
      await withTimeout(
        this.adds.run({
          name: options.name ?? FORWARD_JOB_NAME,
          jobId,
          attempt,
          delayMs: Math.max(0, Math.round(options.delayMs ?? 0)),
        }),
        this.enqueueTimeoutMs,
      );
      this.available = true;
    } catch (error) {
      this.unavailable(error as Error);
      throw new QueueUnavailableError('postgres', (error as Error).message);
    }
  }

  isAvailable(): boolean {
    return this.available;
  }

  /** PostgreSQL keeps its schedulers through restarts: no onReconnected here. */
  async schedule(name: string, everyMs: number): Promise<void> {
    await withTimeout(
      this.queue.upsertJobScheduler(
        name,
        { every: everyMs },
        { name, data: SCHEDULED_DATA, opts: { removeOnComplete: true, removeOnFail: true } },
      ),
      this.enqueueTimeoutMs,
    );
  }

  async process(handler: ForwardJobHandler, options: ProcessOptions): Promise<void> {
    if (this.worker) throw new Error('this queue is processed already');
    const worker = new PgWorker<ForwardJobData>(this.options.queueName, dispatch(handler, options), {
      // More connections than this buy nothing at 2 cores. PGlite runs one statement at a time, and its
      // socket server takes 16 connections in all, 10 of which are the application's pool.
      connection: this.connection(
        this.options.sharedSession ? 2 : Math.min(20, Math.max(4, Math.ceil(options.concurrency / 3))),
      ),
      concurrency: options.concurrency,
      ...LOCK_OPTIONS(options.lockMs),
    });
    this.worker = worker;
    worker.on('error', (error: Error) => this.unavailable(error));
    worker.on('failed', (job, error) => {
      this.logger.warn({
        msg: 'queued forward job failed in the worker',
        job: { id: job?.id, attempts_made: job?.attemptsMade },
        error: error.message,
      });
    });
    await worker.waitUntilReady();
    if (this.options.sharedSession) await this.schedule(EMBEDDED_WAKE_JOB, EMBEDDED_WAKE_EVERY_MS);
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      if (this.probe) clearTimeout(this.probe);
      if (this.worker) await this.worker.close();
      await this.queue.close().catch(() => undefined);
    })();
    return this.closed;
  }

  private connection(max: number) {
    return {
      connectionString: this.options.databaseUrl,
      schema: this.options.schema,
      migrate: true,
      max,
      connectionTimeoutMillis: this.enqueueTimeoutMs,
      application_name: `vault-forward-${this.options.role}-queue`,
    };
  }

  private async joinSharedSearchPath(): Promise<void> {
    const client = new Client({ connectionString: this.options.databaseUrl });
    await client.connect();
    try {
      const schema = this.options.schema ?? 'bullmq';
      // After public, so the application's unqualified names keep meaning its own tables.
      await client.query(
        `SELECT set_config('search_path', current_setting('search_path') || ', ' || quote_ident($1::text), false)
          WHERE NOT $1::name = ANY (current_schemas(false))`,
        [schema],
      );
    } finally {
      await client.end();
    }
  }

  private unavailable(error: Error): void {
    if (this.available) this.logger.warn({ msg: `postgres job queue unavailable: ${error.message}` });
    this.available = false;
    this.probeUntilBack();
  }

  /**
   * While unavailable the API refuses queued forwards before enqueueing (isAvailable), so no enqueue
   * would ever find the database back: a probe through the queue's own pool does, once a second, and
   * makes the queue available again (readiness `queue: up`, 202s) without a restart.
   */
  private probeUntilBack(): void {
    if (this.probe || this.closed) return;
    const probe = async () => {
      try {
        await withTimeout(this.queue.getJobState(PROBE_JOB_ID), this.enqueueTimeoutMs);
      } catch {
        if (!this.closed) this.probe = setTimeout(() => void probe(), PROBE_INTERVAL_MS).unref();
        return;
      }
      this.probe = null;
      if (!this.available) this.logger.log({ msg: 'postgres job queue available again' });
      this.available = true;
    };
    this.probe = setTimeout(() => void probe(), PROBE_INTERVAL_MS).unref();
  }
}
