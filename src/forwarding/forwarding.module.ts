import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { ForwardJobsModule } from '../forward-jobs/forward-jobs.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { ForwardHttpHandler } from './forward-http-handler';
import { ForwardRecordEntity } from './forward-record.entity';
import { ForwardRecordsReader } from './forward-records.reader';
import { ForwardingController } from './forwarding.controller';
import { ForwardingCoreModule } from './forwarding-core.module';
import { ForwardingService } from './forwarding.service';

/** The API's side of forwarding: POST /vault-forward (ForwardHttpHandler) and the records' routes, over ForwardingCoreModule. */
@Module({
  imports: [
    TypeOrmModule.forFeature([ForwardRecordEntity]),
    AuthModule,
    ForwardingCoreModule,
    ForwardJobsModule,
    IdempotencyModule,
  ],
  controllers: [ForwardingController],
  providers: [ForwardingService, ForwardHttpHandler, ForwardRecordsReader],
  exports: [ForwardHttpHandler, ForwardingCoreModule],
})
export class ForwardingModule {}
