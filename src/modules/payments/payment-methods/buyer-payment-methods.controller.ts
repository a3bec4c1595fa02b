import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { BuyerErrors } from '../buyers/buyers.errors';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { BuyerPaymentMethodsResponse, ListBuyerPaymentMethodsQuery } from './dto/payment-method.dto';
import { PaymentMethodsService } from './payment-methods.service';

/**
 * `GET /buyers/payment-methods` (what the SDK's `buyers.paymentMethods.list` calls). Its module is
 * imported before BuyersModule so this static path is registered ahead of `GET /buyers/:id`.
 */
@ApiTags('Buyers')
@MerchantScoped()
@Controller('buyers')
export class BuyerPaymentMethodsController {
  constructor(private readonly paymentMethods: PaymentMethodsService) {}

  @Get('payment-methods')
  @RequireScope('payment-methods.read')
  @ApiOperation({
    summary: "List a buyer's stored cards (at most 100, not paginated), by creation time or last use",
  })
  @ApiOkResponse({ type: BuyerPaymentMethodsResponse })
  @ApiProblems(CommonErrors.validationFailed, BuyerErrors.notFound)
  list(
    @MerchantAccountId() merchant: string,
    @Query() query: ListBuyerPaymentMethodsQuery,
  ): Promise<BuyerPaymentMethodsResponse> {
    return this.paymentMethods.listForBuyer(merchant, query);
  }
}
