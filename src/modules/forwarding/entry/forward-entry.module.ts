import { Module } from '@nestjs/common';
import { AuthModule } from '../../merchants/auth/auth.module';
import { ForwardJobsModule } from '../jobs/forward-jobs.module';
import { ForwardingCoreModule } from '../request/forwarding-core.module';
import { IdempotencyCoreModule } from '../idempotency/idempotency.module';
import { ForwardHttpHandler } from './forward-http-handler';

/**
 * The API's side of forwarding. POST /vault-forward (ForwardHttpHandler) chooses between sending now
 * (ForwardingService, over ForwardingCoreModule) and queueing (ForwardJobsService), so it sits above both
 * forwarding/ and forward-jobs/, and neither of them imports this room.
 */
@Module({
  imports: [AuthModule, ForwardingCoreModule, ForwardJobsModule, IdempotencyCoreModule],
  providers: [ForwardHttpHandler],
  exports: [ForwardHttpHandler, ForwardingCoreModule],
})
export class ForwardEntryModule {}
