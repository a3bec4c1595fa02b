import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { CheckoutSessionErrors } from './checkout-sessions.errors';
import { CheckoutSessionThreeDSecureDto } from './dto/three-d-secure.dto';
import { CheckoutSessionsService } from './checkout-sessions.service';
import {
  CheckoutSessionCreateDto,
  CheckoutSessionFieldsDto,
  CheckoutSessionResponse,
} from './dto/checkout-session.dto';

const SESSION_ID = ApiParam({ name: 'session_id', format: 'uuid', description: 'The checkout session.' });

@ApiTags('Checkout sessions')
@MerchantScoped()
@Controller('checkout/sessions')
export class CheckoutSessionsController {
  constructor(private readonly sessions: CheckoutSessionsService) {}

  @Post()
  @HttpCode(201)
  @RequireScope('checkout-sessions.write')
  @ApiOperation({ summary: 'Create a checkout session (expires_in seconds, 1–3600, default 3600)' })
  // The server takes no body at all as `{}` (every field has a default), so the document must not say required.
  @ApiBody({ type: CheckoutSessionCreateDto, required: false })
  @ApiCreatedResponse({ type: CheckoutSessionResponse })
  @ApiProblems(CommonErrors.validationFailed)
  async create(
    @MerchantAccountId() merchant: string,
    @Body() body: CheckoutSessionCreateDto,
  ): Promise<CheckoutSessionResponse> {
    return CheckoutSessionResponse.from(await this.sessions.create(merchant, body));
  }

  @Get(':session_id')
  @RequireScope('checkout-sessions.read')
  @ApiOperation({ summary: 'Get a checkout session (its card as label, scheme and expiry only)' })
  @SESSION_ID
  @ApiOkResponse({ type: CheckoutSessionResponse })
  @ApiProblems(CheckoutSessionErrors.notFound, CheckoutSessionErrors.expired)
  async get(@MerchantAccountId() merchant: string, @Param('session_id') id: string): Promise<CheckoutSessionResponse> {
    return CheckoutSessionResponse.from(await this.sessions.get(merchant, id));
  }

  @Put(':session_id')
  @RequireScope('checkout-sessions.write')
  @ApiOperation({
    summary: 'Update a checkout session (metadata; expires_in from now, never past an hour after creation)',
  })
  @SESSION_ID
  @ApiOkResponse({ type: CheckoutSessionResponse })
  @ApiProblems(CommonErrors.validationFailed, CheckoutSessionErrors.notFound, CheckoutSessionErrors.expired)
  async update(
    @MerchantAccountId() merchant: string,
    @Param('session_id') id: string,
    @Body() body: CheckoutSessionCreateDto,
  ): Promise<CheckoutSessionResponse> {
    return CheckoutSessionResponse.from(await this.sessions.update(merchant, id, body));
  }

  @Put(':session_id/fields')
  @RequireScope('checkout-sessions.write')
  @ApiOperation({
    summary:
      'Collect a card (or name a stored one) and its security code into the session; nothing of them is returned',
  })
  @SESSION_ID
  @ApiOkResponse({ type: CheckoutSessionResponse })
  @ApiProblems(CommonErrors.validationFailed, CheckoutSessionErrors.notFound, CheckoutSessionErrors.expired)
  async fields(
    @MerchantAccountId() merchant: string,
    @Param('session_id') id: string,
    @Body() body: CheckoutSessionFieldsDto,
  ): Promise<CheckoutSessionResponse> {
    return CheckoutSessionResponse.from(await this.sessions.setFields(merchant, id, body.payment_method));
  }

  @Put(':session_id/three-d-secure')
  @RequireScope('checkout-sessions.write')
  @ApiOperation({
    summary:
      'Store the 3-D Secure outcome for the session’s card (Gr4vy’s three_d_secure_data shape); sealed, never returned, ' +
      'erased with the session; fills CARD_3DS_*_1',
  })
  @SESSION_ID
  @ApiOkResponse({ type: CheckoutSessionResponse })
  @ApiProblems(
    CommonErrors.validationFailed,
    CommonErrors.conflict,
    CheckoutSessionErrors.notFound,
    CheckoutSessionErrors.expired,
    CheckoutSessionErrors.noCard,
  )
  async threeDSecure(
    @MerchantAccountId() merchant: string,
    @Param('session_id') id: string,
    @Body() body: CheckoutSessionThreeDSecureDto,
  ): Promise<CheckoutSessionResponse> {
    return CheckoutSessionResponse.from(await this.sessions.setThreeDSecure(merchant, id, body));
  }

  @Delete(':session_id')
  @HttpCode(204)
  @RequireScope('checkout-sessions.write')
  @ApiOperation({ summary: 'Delete a checkout session and its card data' })
  @SESSION_ID
  @ApiNoContentResponse({ description: 'Deleted, card data and security code with it.' })
  @ApiProblems(CheckoutSessionErrors.notFound)
  async delete(@MerchantAccountId() merchant: string, @Param('session_id') id: string): Promise<void> {
    await this.sessions.delete(merchant, id);
  }
}
