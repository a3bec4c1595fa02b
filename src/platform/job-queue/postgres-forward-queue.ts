import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
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
}

/**
 * An enqueue here shares the fate of the request's own queries: PostgreSQL down means the API is down
 * anyway, so the budget is the API's query timeout rather than Redis's one second, and it includes
 * the wait for one of the producer's few pooled connections during a burst.
 */
const POSTGRES_ENQUEUE_TIMEOUT_MS = 5_000;

/** Between probes of the database while the producer is unavailable. */
const PROBE_INTERVAL_MS = 1_000;
/** A job id no job has (ours are `<uuid>.<attempt>`): looking its state up is one indexed read through the queue's pool. */
const PROBE_JOB_ID = 'availability-probe';

/** The producers' pool: a few connections, shared by both queues. */
function producerPoolMax(options: PostgresQueueOptions): number {
  return options.role === 'api' ? 4 : 2;
}

/** The pools of BullMQ's connections to its schema (`bullmq`), shared by the two queues. */
export function postgresPools(options: PostgresQueueOptions): PostgresPools {
  return new PostgresPools(
    { databaseUrl: options.databaseUrl, role: options.role, connectionTimeoutMillis: POSTGRES_ENQUEUE_TIMEOUT_MS },
    producerPoolMax(options),
  );
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
  private readonly enqueueTimeoutMs = POSTGRES_ENQUEUE_TIMEOUT_MS;
  private readonly adds = batchedEnqueues(() => this.queue);

  constructor(
    @InjectQueue(VAULT_FORWARD_QUEUE) private readonly queue: EngineQueue,
    @Inject(POSTGRES_QUEUE_OPTIONS) protected readonly options: PostgresQueueOptions,
    @Inject(POSTGRES_POOLS) private readonly pools: PostgresPools,
  ) {
    super();
    this.queue.on('error', (error: Error) => this.unavailable(error));
  }

  /** Applies BullMQ's migrations (idempotent, under its advisory lock) and checks the schema. */
  async start(): Promise<void> {
    await this.pools.migrate();
    await this.queue.waitUntilReady();
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
        // The consumers' pool, shared with the other queue's Worker and grown by this one's share.
        connection: this.pools.worker(this.consumerShare(concurrency)),
        concurrency,
        ...LOCK_OPTIONS(lockMs),
      },
    };
  }

  /**
   * Connections this consumer adds to the consumers' pool: its Worker's LISTEN connection, and the
   * queries of the forwards' Worker. More than this buys nothing at 2 cores.
   */
  protected consumerShare(concurrency: number): number {
    return 1 + Math.min(20, Math.max(4, Math.ceil(concurrency / 3)));
  }

  /** PostgreSQL keeps its schedulers and jobs through restarts: no onReconnected here. */
  consuming(worker: EngineWorker): Promise<void> {
    worker.on('error', (error: Error) => this.unavailable(error));
    return Promise.resolve();
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
