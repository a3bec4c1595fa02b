import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { VaultErrors } from '../../vault/vault.errors';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { CommonErrors } from '../../../platform/problem/common.errors';
import {
  CreatePaymentMethodDto,
  ListPaymentMethodsQuery,
  paymentMethodCursorFilters,
  PaymentMethodResponse,
} from './dto/payment-method.dto';
import { PaymentMethod } from './payment-method.entity';
import { BuyerErrors } from '../buyers/buyers.errors';
import { PaymentMethodErrors } from './payment-methods.errors';
import { CheckoutSessionErrors } from '../checkout-sessions/checkout-sessions.errors';
import { PaymentMethodsService } from './payment-methods.service';

@ApiTags('Payment methods')
@MerchantScoped()
@Controller('payment-methods')
export class PaymentMethodsController {
  constructor(private readonly paymentMethods: PaymentMethodsService) {}

  @Post()
  @HttpCode(201)
  @RequireScope('payment-methods.write')
  @ApiOperation({
    summary:
      'Store a card in the vault (the number is encrypted and never returned), or the card of a checkout session',
  })
  @ApiCreatedResponse({ type: PaymentMethodResponse })
  @ApiProblems(
    CommonErrors.validationFailed,
    BuyerErrors.notFound,
    CheckoutSessionErrors.notFound,
    CheckoutSessionErrors.expired,
    CheckoutSessionErrors.noCard,
    CheckoutSessionErrors.cardIsStored,
    VaultErrors.keyStoreUnavailable,
    VaultErrors.masterKeyMismatch,
  )
  async create(
    @MerchantAccountId() merchant: string,
    @Body() body: CreatePaymentMethodDto,
  ): Promise<PaymentMethodResponse> {
    return PaymentMethodResponse.from(await this.paymentMethods.create(merchant, body));
  }

  @Get()
  @RequireScope('payment-methods.read')
  @ApiOperation({ summary: 'List stored cards, newest first, with cursor pagination (limit 1–100, default 20)' })
  @Paginated({
    default: 20,
    max: 100,
    scope: 'payment-methods',
    item: PaymentMethodResponse,
    filters: paymentMethodCursorFilters,
  })
  list(
    @MerchantAccountId() merchant: string,
    @Query() filters: ListPaymentMethodsQuery,
    @Keyset() keyset: KeysetRequest,
  ): Promise<PaymentMethod[]> {
    return this.paymentMethods.list(merchant, filters, keyset);
  }

  @Get(':id')
  @RequireScope('payment-methods.read')
  @ApiOperation({ summary: 'Get a stored card' })
  @ApiOkResponse({ type: PaymentMethodResponse })
  @ApiProblems(PaymentMethodErrors.notFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<PaymentMethodResponse> {
    return PaymentMethodResponse.from(await this.paymentMethods.get(merchant, id));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScope('payment-methods.write')
  @ApiOperation({ summary: 'Delete a stored card and its ciphertext' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(PaymentMethodErrors.notFound)
  async delete(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<void> {
    await this.paymentMethods.delete(merchant, id);
  }
}
