import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { Client } from 'pg';
import { VAULT_CALLBACK_QUEUE, VAULT_FORWARD_QUEUE } from '../redis/queues';
import {
  batchedEnqueues,
  bullJobId,
  ConsumerSettings,
  EnqueueOptions,
  ForwardQueue,
  FORWARD_JOB_NAME,
  QueueUnavailableError,
  removeFailedCopy,
  SCHEDULED_DATA,
} from './forward-queue';
import type { EngineQueue, EngineWorker } from './engine';
import { LOCK_OPTIONS } from './job-options';
import { PostgresPools } from './postgres-pools';
import { withTimeout } from '../time/with-timeout';

export const POSTGRES_QUEUE_OPTIONS = Symbol('POSTGRES_QUEUE_OPTIONS');
export const POSTGRES_POOLS = Symbol('POSTGRES_POOLS');

export interface PostgresQueueOptions {
  databaseUrl: string;
  role: 'api' | 'worker';
  /**
   * The embedded database (PGlite behind pglite-socket) serves every connection from one session and
   * ignores per-connection start-up options, so BullMQ's `-c search_path=bullmq` never applies there.
   * Then the schema is appended to that session's search_path instead (docs/decisions/0053). That one
   * session also serialises every statement, so an enqueue there is given EMBEDDED_ENQUEUE_TIMEOUT_MS.
   */
  sharedSession: boolean;
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
const EMBEDDED_WAKE_JOB = 'embedded-worker-wake';
const EMBEDDED_WAKE_EVERY_MS = 1_000;

/** Between probes of the database while the producer is unavailable. */
const PROBE_INTERVAL_MS = 1_000;
/** A job id no job has (ours are `<uuid>.<attempt>`): looking its state up is one indexed read through the queue's pool. */
const PROBE_JOB_ID = 'availability-probe';

/** The producers' pool: a few connections (shared by both queues), one on the embedded database. */
function producerPoolMax(options: PostgresQueueOptions): number {
  return options.sharedSession ? 1 : options.role === 'api' ? 4 : 2;
}

/** The pools of BullMQ's connections to its schema (`bullmq`), shared by the two queues. */
export function postgresPools(options: PostgresQueueOptions): PostgresPools {
  return new PostgresPools(
    { databaseUrl: options.databaseUrl, role: options.role, connectionTimeoutMillis: enqueueTimeoutMs(options) },
    producerPoolMax(options),
  );
}

function enqueueTimeoutMs(options: PostgresQueueOptions): number {
  return options.sharedSession ? EMBEDDED_ENQUEUE_TIMEOUT_MS : POSTGRES_ENQUEUE_TIMEOUT_MS;
}

/**
 * BullMQ on PostgreSQL, through the queue BullModule registers (EngineQueue on createPostgresBackend). An
 * enqueue gives up after POSTGRES_ENQUEUE_TIMEOUT_MS, pool wait included.
 */
@Injectable()
export class PostgresForwardQueue extends ForwardQueue {
  readonly backend = 'postgres' as const;
  private readonly logger = new Logger('ForwardQueue');
  private available = true;
  /** The next probe while unavailable (probeUntilBack). */
  private probe: NodeJS.Timeout | null = null;
  private consumed = false;
  private closed: Promise<void> | null = null;
  private readonly enqueueTimeoutMs: number;
  private readonly adds = batchedEnqueues(() => this.queue);

  constructor(
    @InjectQueue(VAULT_FORWARD_QUEUE) private readonly queue: EngineQueue,
    @Inject(POSTGRES_QUEUE_OPTIONS) protected readonly options: PostgresQueueOptions,
    @Inject(POSTGRES_POOLS) private readonly pools: PostgresPools,
  ) {
    super();
    this.enqueueTimeoutMs = enqueueTimeoutMs(options);
    this.queue.on('error', (error: Error) => this.unavailable(error));
  }

  /** Applies BullMQ's migrations (idempotent, under its advisory lock) and checks the schema. */
  async start(): Promise<void> {
    await this.pools.migrate();
    await this.queue.waitUntilReady();
    if (this.options.sharedSession) await this.joinSharedSearchPath();
  }

  async enqueue(jobId: string, options: EnqueueOptions = {}): Promise<void> {
    const attempt = options.attempt ?? 1;
    const id = bullJobId(jobId, attempt, options.copy);
    try {
      if (options.replaceFailed) await withTimeout(removeFailedCopy(this.queue, id), this.enqueueTimeoutMs);
      await withTimeout(
        this.adds.run({
          name: options.name ?? FORWARD_JOB_NAME,
          jobId,
          attempt,
          delayMs: Math.max(0, Math.round(options.delayMs ?? 0)),
          attempts: options.attempts,
          copy: options.copy,
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

  /** Its jobs are rows of the same database as the job rows: they are lost with them or not at all. */
  mayHaveLostJobs(): Promise<boolean> {
    return Promise.resolve(false);
  }

  async markSwept(): Promise<void> {}

  consumer(concurrency: number, lockMs: number): ConsumerSettings {
    if (this.consumed) throw new Error('this queue is consumed already');
    this.consumed = true;
    return {
      queueName: this.queue.name,
      options: {
        engine: 'postgres',
        // The consumers' pool, shared with the other queue's Worker and grown by this one's share. Not on the
        // embedded database: there a Worker whose LISTEN connection comes out of a shared pool leaves the
        // start-up housekeeping failing ("relation does not exist") for seconds, so each Worker has a pool
        // of one and a LISTEN connection of its own (docs/decisions/0092).
        connection: this.options.sharedSession
          ? { ...this.pools.ownedConnection(), max: 1 }
          : this.pools.worker(this.consumerShare(concurrency)),
        concurrency,
        ...LOCK_OPTIONS(lockMs),
      },
    };
  }

  /**
   * Connections this consumer adds to the consumers' pool: its Worker's LISTEN connection, and the
   * queries of the forwards' Worker. More than this buys nothing at 2 cores. PGlite runs one statement
   * at a time, and its socket server takes 16 connections in all, 10 of which are the application's pool.
   */
  protected consumerShare(concurrency: number): number {
    return 1 + Math.min(20, Math.max(4, Math.ceil(concurrency / 3)));
  }

  /** PostgreSQL keeps its schedulers and jobs through restarts: no onReconnected here. */
  async consuming(worker: EngineWorker): Promise<void> {
    worker.on('error', (error: Error) => this.unavailable(error));
    if (this.options.sharedSession) await this.schedule(EMBEDDED_WAKE_JOB, EMBEDDED_WAKE_EVERY_MS);
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      if (this.probe) clearTimeout(this.probe);
      // The consumer's Worker is closed first (its WorkerHost, before shutdown); the shared pools after
      // both queues (QueueModule).
      await this.queue.close().catch(() => undefined);
    })();
    return this.closed;
  }

  private async joinSharedSearchPath(): Promise<void> {
    const client = new Client({ connectionString: this.options.databaseUrl });
    await client.connect();
    try {
      const schema = 'bullmq';
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

/**
 * The job-end callbacks' queue on PostgreSQL: the same pools as the forward queue (PostgresPools); its
 * Worker adds its LISTEN connection and two for queries to the consumers' pool (its sends wait on
 * receivers, not on PostgreSQL; docs/decisions/0092).
 */
@Injectable()
export class PostgresCallbackQueue extends PostgresForwardQueue {
  constructor(
    @InjectQueue(VAULT_CALLBACK_QUEUE) queue: EngineQueue,
    @Inject(POSTGRES_QUEUE_OPTIONS) options: PostgresQueueOptions,
    @Inject(POSTGRES_POOLS) pools: PostgresPools,
  ) {
    super(queue, options, pools);
  }

  protected override consumerShare(): number {
    return 3;
  }
}
