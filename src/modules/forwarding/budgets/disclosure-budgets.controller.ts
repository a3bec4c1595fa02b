import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { VaultForwardConfigErrors } from '../../forwarding-setup/configs/vault-forward-configs.errors';
import { transportOf } from '../../forwarding-setup/targets/transport';
import { DisclosureBudgetResponse, PutConfigBudgetDto, PutMerchantBudgetDto } from './dto/disclosure-budget.dto';
import {
  DEFAULT_DISCLOSURES_PER_CARD,
  DEFAULT_DISTINCT_CARDS,
  DEFAULT_WINDOW_SECONDS,
  DisclosureBudgetsService,
} from './disclosure-budgets.service';

const MERCHANT_DEFAULTS = {
  window_seconds: DEFAULT_WINDOW_SECONDS,
  distinct_cards: DEFAULT_DISTINCT_CARDS,
  disclosures_per_card: DEFAULT_DISCLOSURES_PER_CARD,
};
const CONFIG_DEFAULTS = { window_seconds: DEFAULT_WINDOW_SECONDS, distinct_cards: null, disclosures_per_card: null };

/**
 * Disclosure budgets (decision 0134): the merchant account's, over all its configs, and each config's, with the
 * placeholders it may fill. Under their own scope, so a key that forwards need not be one that lifts the limits.
 */
@ApiTags('Forwarding disclosure budgets')
@MerchantScoped()
@Controller('vault-forward')
export class DisclosureBudgetsController {
  constructor(
    private readonly budgets: DisclosureBudgetsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('budget')
  @RequireScope('vault-forward-budgets.read')
  @ApiOperation({ summary: 'Get the merchant account’s disclosure budget (the defaults while none was set)' })
  @ApiOkResponse({ type: DisclosureBudgetResponse })
  async getMerchant(@MerchantAccountId() merchant: string): Promise<DisclosureBudgetResponse> {
    return DisclosureBudgetResponse.from(null, await this.budgets.get(merchant, null), MERCHANT_DEFAULTS);
  }

  @Put('budget')
  @RequireScope('vault-forward-budgets.write')
  @ApiOperation({ summary: 'Set the merchant account’s disclosure budget (whole: a field left out takes its default)' })
  @ApiOkResponse({ type: DisclosureBudgetResponse })
  @ApiProblems(CommonErrors.validationFailed)
  async putMerchant(
    @MerchantAccountId() merchant: string,
    @Body() body: PutMerchantBudgetDto,
  ): Promise<DisclosureBudgetResponse> {
    const webhookUrl = body.webhook_url == null ? null : this.webhookUrl(body.webhook_url);
    const stored = await this.budgets.put(merchant, {
      config_id: null,
      window_seconds: body.window_seconds ?? DEFAULT_WINDOW_SECONDS,
      distinct_cards: body.distinct_cards ?? null,
      disclosures_per_card: body.disclosures_per_card ?? null,
      allowed_placeholders: null,
      webhook_url: webhookUrl,
    });
    return DisclosureBudgetResponse.from(null, stored, MERCHANT_DEFAULTS);
  }

  @Delete('budget')
  @HttpCode(204)
  @RequireScope('vault-forward-budgets.write')
  @ApiOperation({ summary: 'Remove the merchant account’s disclosure budget: the defaults apply again' })
  @ApiNoContentResponse({ description: 'Removed (or there was none).' })
  async removeMerchant(@MerchantAccountId() merchant: string): Promise<void> {
    await this.budgets.remove(merchant, null);
  }

  @Get('configs/:id/budget')
  @RequireScope('vault-forward-budgets.read')
  @ApiOperation({ summary: 'Get a config’s disclosure budget and the placeholders it may fill' })
  @ApiOkResponse({ type: DisclosureBudgetResponse })
  @ApiProblems(VaultForwardConfigErrors.notFound)
  async getConfig(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<DisclosureBudgetResponse> {
    return DisclosureBudgetResponse.from(id, await this.budgets.get(merchant, id), CONFIG_DEFAULTS);
  }

  @Put('configs/:id/budget')
  @RequireScope('vault-forward-budgets.write')
  @ApiOperation({ summary: 'Set a config’s disclosure budget and the placeholders it may fill (whole)' })
  @ApiOkResponse({ type: DisclosureBudgetResponse })
  @ApiProblems(CommonErrors.validationFailed, VaultForwardConfigErrors.notFound)
  async putConfig(
    @MerchantAccountId() merchant: string,
    @Param('id') id: string,
    @Body() body: PutConfigBudgetDto,
  ): Promise<DisclosureBudgetResponse> {
    const stored = await this.budgets.put(merchant, {
      config_id: id,
      window_seconds: body.window_seconds ?? DEFAULT_WINDOW_SECONDS,
      distinct_cards: body.distinct_cards ?? null,
      disclosures_per_card: body.disclosures_per_card ?? null,
      allowed_placeholders: body.allowed_placeholders ?? null,
      webhook_url: null,
    });
    return DisclosureBudgetResponse.from(id, stored, CONFIG_DEFAULTS);
  }

  @Delete('configs/:id/budget')
  @HttpCode(204)
  @RequireScope('vault-forward-budgets.write')
  @ApiOperation({ summary: 'Remove a config’s disclosure budget: no limit of its own, every placeholder' })
  @ApiNoContentResponse({ description: 'Removed (or there was none).' })
  @ApiProblems(VaultForwardConfigErrors.notFound)
  async removeConfig(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<void> {
    await this.budgets.remove(merchant, id);
  }

  /** The event URL under a target's transport rules: https (http for operator-listed hosts), public IP literals. */
  private webhookUrl(text: string): string {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw invalidUrl('must be an absolute URL');
    }
    if (url.username || url.password) throw invalidUrl('must not carry credentials');
    const transport = transportOf(this.config.forwardInsecureHosts, url);
    if (transport.refused === 'insecure') throw invalidUrl('must use https');
    if (transport.refused === 'address') throw invalidUrl(`${transport.reason} address`);
    return url.href;
  }
}

function invalidUrl(message: string): ProblemException {
  return new ProblemException(CommonErrors.validationFailed, `webhook_url ${message}.`, [
    { location: 'body', name: 'webhook_url', message },
  ]);
}
