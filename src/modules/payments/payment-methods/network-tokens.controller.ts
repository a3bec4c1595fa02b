import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { CreateNetworkTokenDto, NetworkTokenResponse, NetworkTokensResponse } from './dto/network-token.dto';
import { NETWORK_TOKENS_MAX, NetworkTokensService } from './network-tokens.service';
import { NetworkTokenErrors, PaymentMethodErrors } from './payment-methods.errors';

@ApiTags('Payment methods - Network tokens')
@MerchantScoped()
@Controller('payment-methods/:payment_method_id/network-tokens')
export class NetworkTokensController {
  constructor(private readonly tokens: NetworkTokensService) {}

  @Post()
  @HttpCode(201)
  @RequireScope('payment-methods.write')
  @ApiOperation({ summary: 'Store a network token of a card (encrypted; only its last four digits are returned)' })
  @ApiCreatedResponse({ type: NetworkTokenResponse })
  @ApiProblems(CommonErrors.validationFailed, PaymentMethodErrors.notFound)
  async create(
    @MerchantAccountId() merchant: string,
    @Param('payment_method_id') paymentMethodId: string,
    @Body() body: CreateNetworkTokenDto,
  ): Promise<NetworkTokenResponse> {
    return NetworkTokenResponse.from(await this.tokens.create(merchant, paymentMethodId, body));
  }

  @Get()
  @RequireScope('payment-methods.read')
  @ApiOperation({
    summary: `List the network tokens of a card, newest first (at most ${NETWORK_TOKENS_MAX}, not paginated: a card keeps few)`,
  })
  @ApiOkResponse({ type: NetworkTokensResponse })
  @ApiProblems(PaymentMethodErrors.notFound)
  async list(
    @MerchantAccountId() merchant: string,
    @Param('payment_method_id') paymentMethodId: string,
  ): Promise<NetworkTokensResponse> {
    return { items: (await this.tokens.list(merchant, paymentMethodId)).map((row) => NetworkTokenResponse.from(row)) };
  }

  @Delete(':network_token_id')
  @HttpCode(204)
  @RequireScope('payment-methods.write')
  @ApiOperation({ summary: 'Delete a network token and its ciphertext' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(PaymentMethodErrors.notFound, NetworkTokenErrors.notFound)
  async delete(
    @MerchantAccountId() merchant: string,
    @Param('payment_method_id') paymentMethodId: string,
    @Param('network_token_id') id: string,
  ): Promise<void> {
    await this.tokens.delete(merchant, paymentMethodId, id);
  }
}
