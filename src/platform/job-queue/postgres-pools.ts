import { Pool } from 'pg';
import { runMigrations } from 'bullmq';

/** BullMQ's schema in the application's database. */
const SCHEMA = 'bullmq';

/** What a pool of BullMQ's connections needs to know (PostgresQueueOptions's part). */
interface PoolSettings {
  databaseUrl: string;
  role: 'api' | 'worker';
  /** The most a connection may be waited for (an enqueue's budget). */
  connectionTimeoutMillis: number;
}

/**
 * The PostgreSQL connections of the two job queues (forwards, job-end callbacks), shared between them
 * (docs/decisions/0092): BullMQ's PostgreSQL backend takes an existing `pg.Pool` as its connection and
 * then neither ends it nor migrates through it, so the two producers (BullMQ Queues) share one pool,
 * and the two consumers (Workers) another, whose size each consumer raises by its share when it is
 * made (a Worker checks its LISTEN connection out of the pool, one per queue). Without this, each queue
 * and each worker would bring a pool and a LISTEN connection of its own. Created lazily; closed by
 * QueueModule after both queues.
 */
export class PostgresPools {
  private producerPool: Pool | null = null;
  private workerPool: Pool | null = null;
  private migrated: Promise<void> | null = null;

  constructor(
    private readonly settings: PoolSettings,
    private readonly producerMax: number,
  ) {}

  /** The producers' pool (BullModule's shared configuration of both queues). */
  producer(): Pool {
    this.producerPool ??= this.pool(this.producerMax, 'queue');
    return this.producerPool;
  }

  /**
   * The consumers' pool, grown by `share` connections for one more Worker (its LISTEN connection and
   * the queries it adds). pg-pool reads `options.max` at each checkout, so growing it is safe.
   */
  worker(share: number): Pool {
    if (!this.workerPool) this.workerPool = this.pool(share, 'queue-worker');
    else this.workerPool.options.max += share;
    return this.workerPool;
  }

  /** The most connections the consumers' pool may open (for tests and the decision's figures). */
  get workerMax(): number {
    return this.workerPool?.options.max ?? 0;
  }

  /** The connections the consumers' pool holds now. */
  get workerOpen(): number {
    return this.workerPool?.totalCount ?? 0;
  }

  /**
   * BullMQ's migrations (idempotent, in one transaction under its advisory lock, so any number of
   * processes may start at once), run once through the producers' pool: a BullMQ Queue given a pool
   * only checks the schema. Memoized, failure included (start-up reports it once).
   */
  migrate(): Promise<void> {
    this.migrated ??= (async () => {
      const client = await this.producer().connect();
      try {
        await runMigrations(client, SCHEMA);
      } finally {
        client.release();
      }
    })();
    return this.migrated;
  }

  async close(): Promise<void> {
    const pools = [this.workerPool, this.producerPool];
    this.workerPool = this.producerPool = null;
    for (const pool of pools) if (pool) await pool.end().catch(() => undefined);
  }

  private pool(max: number, name: string): Pool {
    const pool = new Pool({
      connectionString: this.settings.databaseUrl,
      max,
      connectionTimeoutMillis: this.settings.connectionTimeoutMillis,
      application_name: `vault-forward-${this.settings.role}-${name}`,
      // BullMQ's SQL uses unqualified names.
      options: `-c search_path=${SCHEMA}`,
      // A LISTEN connection checked out of the pool notices a silently dropped peer (BullMQ then blocks up to an hour).
      keepAlive: true,
    });
    // BullMQ's backends report these through their queues' and workers' 'error' events.
    pool.on('error', () => undefined);
    return pool;
  }
}
