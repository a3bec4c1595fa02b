import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultCoreModule } from '../../vault/vault.module';
import { WebhookSecret } from './webhook-secret.entity';
import { WebhookSecretsController } from './webhook-secrets.controller';
import { WebhookSecretsRepository } from './webhook-secrets.repository';
import { WebhookSecretsService } from './webhook-secrets.service';
import { WebhookSecretEvents } from './webhook-secret-events';
import { WebhookSigner } from './webhook-signer';

/**
 * WebhookSigner and the new-secret events alone, for any process that delivers callbacks (the worker): no
 * controller, no pagination.
 */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookSecret]), VaultCoreModule],
  providers: [WebhookSigner, WebhookSecretEvents, WebhookSecretsRepository],
  exports: [WebhookSigner, WebhookSecretEvents, WebhookSecretsRepository],
})
export class WebhookSignerCoreModule {}

/** The API's /vault-forward/webhook-secrets routes. */
@Module({
  imports: [VaultCoreModule, WebhookSignerCoreModule],
  controllers: [WebhookSecretsController],
  providers: [WebhookSecretsService],
  exports: [WebhookSignerCoreModule],
})
export class WebhookSecretsModule {}
