import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../../merchants/auth/auth.module';
import { ForwardingCoreModule } from '../request/forwarding-core.module';
import { IdempotencyCoreModule } from '../idempotency/idempotency.module';
import { ForwardCallbacksModule } from '../callbacks/forward-callbacks.module';
import { ForwardJobCallbackSource } from './job-callback-source';
import { VaultCoreModule } from '../../vault/vault.module';
import { ForwardJob } from './rows/forward-job.entity';
import { ForwardJobsRepository } from './forward-jobs.repository';
import { ForwardJobProcessor } from './forward-job.processor';
import { ForwardJobHousekeeping } from './forward-job-housekeeping';
import { ForwardJobsController } from './forward-jobs.controller';
import { ForwardJobsService } from './forward-jobs.service';
import { LostJobRecovery } from './lost-job-recovery';
import { QueueMetrics } from '../../../platform/metrics/queue-metrics';
import { QUEUE_STATE_NAMES } from './rows/forward-job-statements';

/** Job rows and their sealed plans and responses, for the API and the worker. */
@Module({
  imports: [TypeOrmModule.forFeature([ForwardJob]), VaultCoreModule],
  providers: [
    ForwardJobsRepository,
    // The job rows' queue gauges, read at scrape time by QueueMetrics (decision 0150), in the API and the worker.
    {
      provide: Symbol('FORWARD_QUEUE_GAUGES'),
      inject: [QueueMetrics, ForwardJobsRepository],
      useFactory: (gauges: QueueMetrics, jobs: ForwardJobsRepository) =>
        gauges.watch('forward', QUEUE_STATE_NAMES, () => jobs.queueStates()),
    },
  ],
  exports: [ForwardJobsRepository],
})
class ForwardJobsCoreModule {}

/** The worker's side: the processor, with no route, guard or pagination. ForwardQueue comes from the global QueueModule. */
@Module({
  // Job-end callbacks (src/modules/forwarding/callbacks/), with their own queue's consumer.
  imports: [
    ForwardJobsCoreModule,
    ForwardingCoreModule,
    ForwardCallbacksModule.forRoot({
      jobSource: ForwardJobCallbackSource,
      imports: [ForwardJobsCoreModule],
      consume: true,
    }),
  ],
  providers: [ForwardJobProcessor, ForwardJobHousekeeping, LostJobRecovery],
})
export class ForwardJobsWorkerModule {}

/** The API's side: accepting a queued forward (for ForwardHttpHandler) and /vault-forward/jobs. */
@Module({
  imports: [
    ForwardJobsCoreModule,
    ForwardingCoreModule,
    AuthModule,
    IdempotencyCoreModule,
    ForwardCallbacksModule.forRoot({
      jobSource: ForwardJobCallbackSource,
      imports: [ForwardJobsCoreModule],
    }),
  ],
  controllers: [ForwardJobsController],
  providers: [ForwardJobsService],
  exports: [ForwardJobsService],
})
export class ForwardJobsModule {}
