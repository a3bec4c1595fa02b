import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { ForwardRecordEntity } from './forward-record.entity';
import { ForwardingController } from './forward-records.controller';
import { ForwardRecordsReader } from './forward-records.reader';

/**
 * The records' routes (GET /vault-forward/requests, /activity), for the API. The writer (ForwardRecordsService)
 * is provided by ForwardingCoreModule, so that the API and the worker each have one writer and one spool.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ForwardRecordEntity]), AuthModule],
  controllers: [ForwardingController],
  providers: [ForwardRecordsReader],
})
export class ForwardRecordsModule {}
