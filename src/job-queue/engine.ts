import { createPostgresBackend, Processor, Queue, QueueOptions, Worker, WorkerOptions } from 'bullmq';

/** The engine a BullMQ queue or worker runs on (QUEUE_BACKEND other than none). */
export type QueueEngine = 'redis' | 'postgres';

/** BullMQ's options plus the engine; on PostgreSQL `connection` is a PostgresConnectionOptions. */
export type EngineQueueOptions = Omit<QueueOptions, 'connection'> & { engine: QueueEngine; connection: unknown };
export type EngineWorkerOptions = Omit<WorkerOptions, 'connection'> & { engine: QueueEngine; connection: unknown };

/**
 * The Queue class BullModule builds its queues with (BullModule.queueClass): BullMQ's Queue on the
 * engine its options name. Per instance, unlike setDefaultBackendFactory, which is process-wide and
 * would move every queue of a process (a test process runs apps on both engines) to PostgreSQL.
 */
export class EngineQueue extends Queue {
  constructor(name: string, { engine, ...options }: EngineQueueOptions) {
    super(name, options as never, (engine === 'postgres' ? createPostgresBackend : undefined) as never);
  }
}

/** The Worker class BullModule's explorer builds a WorkerHost's worker with (BullModule.workerClass), as EngineQueue. */
export class EngineWorker extends Worker {
  constructor(name: string, processor: Processor, { engine, ...options }: EngineWorkerOptions) {
    super(name, processor, options as never, (engine === 'postgres' ? createPostgresBackend : undefined) as never);
  }
}
