import { Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../auth/merchant-scoped';
import { MerchantAccountId } from '../auth/principal';
import { RequireScope } from '../auth/scopes';
import { ApiProblems } from '../common/openapi/api-problems';
import { Page, PageOf } from '../common/pagination/page';
import { PaginationErrors } from '../common/pagination/pagination.errors';
import { CommonErrors } from '../common/problem/common.errors';
import { CreatedWebhookSecretResponse, ListWebhookSecretsQuery, WebhookSecretResponse } from './dto/webhook-secret.dto';
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
  @ApiOkResponse({ type: PageOf(WebhookSecretResponse) })
  @ApiProblems(CommonErrors.validationFailed, PaginationErrors.invalidCursor)
  list(
    @MerchantAccountId() merchant: string,
    @Query() query: ListWebhookSecretsQuery,
  ): Promise<Page<WebhookSecretResponse>> {
    return this.secrets.list(merchant, query);
  }
}
