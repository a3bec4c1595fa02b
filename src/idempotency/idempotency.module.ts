import { Module } from '@nestjs/common';
import { VaultModule } from '../vault/vault.module';
import { ForwardIdempotency } from './forward-idempotency';
import { IdempotencyService } from './idempotency.service';

/** Idempotency-Key for POST /vault-forward: IdempotencyService (claim, both paths) and the synchronous path's wrapper. */
@Module({
  imports: [VaultModule],
  providers: [IdempotencyService, ForwardIdempotency],
  exports: [IdempotencyService, ForwardIdempotency],
})
export class IdempotencyModule {}
