import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../auth/merchant-scoped';
import { MerchantAccountId } from '../access/principal';
import { RequireScope } from '../access/scopes';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { CreatedWebhookSecretResponse, ListedWebhookSecret, WebhookSecretResponse } from './dto/webhook-secret.dto';
import { WebhookSecretsService } from './webhook-secrets.service';

/**
 * The secrets that sign the callbacks of queued forwards. Under the forwarding scopes: whoever may
 * ask for a forward with a callback may set up how the callback is verified.
 */
@ApiTags('Forwarding webhook secrets')
@MerchantScoped()
@Controller('vault-forward/webhook-secrets')
export class WebhookSecretsController {
  constructor(private readonly secrets: WebhookSecretsService) {}

  @Post()
  @HttpCode(201)
  @RequireScope('vault-forwards.write')
  @ApiOperation({
    summary: 'Create a webhook signing secret (shown once); the previous one keeps signing for 24 hours',
  })
  @ApiCreatedResponse({ type: CreatedWebhookSecretResponse })
  create(@MerchantAccountId() merchant: string): Promise<CreatedWebhookSecretResponse> {
    return this.secrets.create(merchant);
  }

  @Get()
  @RequireScope('vault-forwards.read')
  @ApiOperation({
    summary: 'List the webhook signing secrets (never the secret), newest first, with cursor pagination',
  })
  @Paginated({ default: 20, max: 100, scope: 'vault-forward-webhook-secrets', item: WebhookSecretResponse })
  list(@MerchantAccountId() merchant: string, @Keyset() keyset: KeysetRequest): Promise<ListedWebhookSecret[]> {
    return this.secrets.list(merchant, keyset);
  }
}
