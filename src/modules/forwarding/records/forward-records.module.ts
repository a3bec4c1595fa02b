import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../../merchants/auth/auth.module';
import { VaultCoreModule } from '../../vault/vault.module';
import { ForwardRecordEntity } from './forward-record.entity';
import { ForwardingController } from './forward-records.controller';
import { ForwardRecordsReader } from './forward-records.reader';
import { ForwardRecordBodyPurge } from './forward-record-body-purge';
import { ForwardRecordsRepository } from './forward-records.repository';
import { ForwardRecordsService } from './forward-records.service';

/**
 * The record writer and its spool, one per process: the API and the worker each import it through
 * ForwardingCoreModule.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ForwardRecordEntity]), VaultCoreModule],
  providers: [ForwardRecordsService, ForwardRecordsRepository],
  exports: [ForwardRecordsService, ForwardRecordsRepository],
})
export class ForwardRecordsCoreModule {}

/**
 * The records' routes (GET /vault-forward/requests, /activity), for the API. The writer is ForwardRecordsCoreModule's,
 * so that the API and the worker each have one writer and one spool. Every API
 * process purges the redacted bodies past their retention (ForwardRecordBodyPurge, decision 0104).
 */
@Module({
  imports: [ForwardRecordsCoreModule, AuthModule, VaultCoreModule],
  controllers: [ForwardingController],
  providers: [ForwardRecordsReader, ForwardRecordBodyPurge],
})
export class ForwardRecordsModule {}
