import { Module } from '@nestjs/common';
import { VaultForwardConfigsCoreModule } from '../../forwarding-setup/configs/vault-forward-configs-core.module';
import { DisclosureBudgetsController } from './disclosure-budgets.controller';
import { DisclosureBudgetsRepository } from './disclosure-budgets.repository';
import { DisclosureBudgetsService } from './disclosure-budgets.service';
import { DisclosureCounter } from './disclosure-counter';
import { DisclosureCountsRepository } from './disclosure-counts.repository';

/** The budgets and their counts, for the executor and planner of any process (no route). */
@Module({
  imports: [VaultForwardConfigsCoreModule],
  providers: [DisclosureBudgetsService, DisclosureBudgetsRepository, DisclosureCounter, DisclosureCountsRepository],
  exports: [DisclosureBudgetsService],
})
export class DisclosureBudgetsCoreModule {}

/** The API's /vault-forward/budget and /vault-forward/configs/{id}/budget routes. */
@Module({
  imports: [DisclosureBudgetsCoreModule],
  controllers: [DisclosureBudgetsController],
})
export class DisclosureBudgetsModule {}
