import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../../merchants/auth/auth.module';
import { LedgerController } from './ledger.controller';
import { LedgerHeadEntity } from './ledger-head.entity';
import { LedgerRepository } from './ledger.repository';
import { LedgerSealer } from './ledger-sealer';
import { LedgerService } from './ledger.service';

/** The ledger's tables, for whoever reads or seals them (the CLI's `ledger` commands too). */
@Module({
  imports: [TypeOrmModule.forFeature([LedgerHeadEntity])],
  providers: [LedgerRepository],
  exports: [LedgerRepository],
})
export class LedgerStoreCoreModule {}

/**
 * The sealer, in every process that writes records (the API and the worker each import it): one chain of heads
 * whichever process seals (decision 0133). The entries themselves are written by the records' statements.
 */
@Module({
  imports: [LedgerStoreCoreModule],
  providers: [LedgerSealer],
  exports: [LedgerStoreCoreModule, LedgerSealer],
})
export class LedgerCoreModule {}

/** The ledger's routes, for the API. */
@Module({
  imports: [LedgerCoreModule, AuthModule],
  controllers: [LedgerController],
  providers: [LedgerService],
})
export class LedgerModule {}
