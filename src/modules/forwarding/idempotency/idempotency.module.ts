import { Module } from '@nestjs/common';
import { VaultCoreModule } from '../../vault/vault.module';
import { ForwardIdempotency, QueuedIdempotency } from './forward-idempotency';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { IdempotencyService } from './idempotency.service';

/** Idempotency-Key for POST /vault-forward: IdempotencyService (claim, both paths) and the wrappers of the synchronous and queued paths. */
@Module({
  imports: [VaultCoreModule],
  providers: [IdempotencyService, IdempotencyKeysRepository, ForwardIdempotency, QueuedIdempotency],
  exports: [IdempotencyService, ForwardIdempotency, QueuedIdempotency],
})
export class IdempotencyCoreModule {}
