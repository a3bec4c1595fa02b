import { createPostgresBackend, Processor, Queue, QueueOptions, Telemetry, Worker, WorkerOptions } from 'bullmq';
import { activeTelemetry } from '../telemetry/telemetry';

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
    super(name, traced(options) as never, (engine === 'postgres' ? createPostgresBackend : undefined) as never);
  }
}

/** The Worker class BullModule's explorer builds a WorkerHost's worker with (BullModule.workerClass), as EngineQueue. */
export class EngineWorker extends Worker {
  constructor(name: string, processor: Processor, { engine, ...options }: EngineWorkerOptions) {
    super(
      name,
      processor,
      traced(options) as never,
      (engine === 'postgres' ? createPostgresBackend : undefined) as never,
    );
  }
}

/**
 * With tracing on (decision 0109), bullmq-otel as BullMQ's telemetry: a producer span per enqueue, a
 * consumer span per job, and the trace context in the job's options on either engine.
 */
function traced<T extends object>(options: T): T {
  const telemetry = activeTelemetry();
  return telemetry ? { ...options, telemetry: telemetry.bullmq as Telemetry } : options;
}
