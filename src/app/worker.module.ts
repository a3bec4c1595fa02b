import { DynamicModule, Module } from '@nestjs/common';
import { CoreModule, CoreOptions } from './core.module';
import { ForwardJobsWorkerModule } from '../modules/forwarding/jobs/forward-jobs.module';
import { ForwardingCoreModule } from '../modules/forwarding/request/forwarding-core.module';
import { QueueModule } from '../platform/job-queue/queue.module';
import { WorkerHeartbeat } from './health/worker-heartbeat';

/**
 * The queue worker: the same core as the API, no HTTP, and forwarding's core (planner, executor,
 * downstream client, record writer) without routes, guard or pagination, and the processor of
 * queued forwards (ForwardJobProcessor), which takes WORKER_CONCURRENCY jobs at a time.
 */
@Module({})
export class WorkerModule {
  static forRoot(options: Omit<CoreOptions, 'role'>): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        CoreModule.forRoot({ ...options, role: 'worker' }),
        ForwardingCoreModule,
        ForwardJobsWorkerModule,
        QueueModule.forRoot({ config: options.config, databaseUrl: options.databaseUrl, role: 'worker' }),
      ],
      providers: [WorkerHeartbeat],
    };
  }
}
