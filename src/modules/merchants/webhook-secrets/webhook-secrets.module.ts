import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VaultModule } from '../../vault/vault.module';
import { WebhookSecret } from './webhook-secret.entity';
import { WebhookSecretsController } from './webhook-secrets.controller';
import { WebhookSecretsService } from './webhook-secrets.service';
import { WebhookSigner } from './webhook-signer';

/** WebhookSigner alone, for any process that delivers callbacks (the worker): no controller, no pagination. */
@Module({
  imports: [VaultModule],
  providers: [WebhookSigner],
  exports: [WebhookSigner],
})
export class WebhookSignerModule {}

/** The API's /vault-forward/webhook-secrets routes. */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookSecret]), VaultModule, WebhookSignerModule],
  controllers: [WebhookSecretsController],
  providers: [WebhookSecretsService],
  exports: [WebhookSignerModule],
})
export class WebhookSecretsModule {}
