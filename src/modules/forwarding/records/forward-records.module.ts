import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../../merchants/auth/auth.module';
import { VaultModule } from '../../vault/vault.module';
import { ForwardRecordEntity } from './forward-record.entity';
import { ForwardingController } from './forward-records.controller';
import { ForwardRecordsReader } from './forward-records.reader';
import { ForwardRecordBodyPurge } from './forward-record-body-purge';

/**
 * The records' routes (GET /vault-forward/requests, /activity), for the API. The writer (ForwardRecordsService)
 * is provided by ForwardingCoreModule, so that the API and the worker each have one writer and one spool. Every API
 * process purges the redacted bodies past their retention (ForwardRecordBodyPurge, decision 0104).
 */
@Module({
  imports: [TypeOrmModule.forFeature([ForwardRecordEntity]), AuthModule, VaultModule],
  controllers: [ForwardingController],
  providers: [ForwardRecordsReader, ForwardRecordBodyPurge],
})
export class ForwardRecordsModule {}
