import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { RequireInstanceScope } from '../access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { AuthErrors } from '../access/auth.errors';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { MerchantAccount } from './merchant-account.entity';
import { MerchantAccountErrors } from './merchant-accounts.errors';
import {
  CreateMerchantAccountDto,
  MerchantAccountResponse,
  UpdateMerchantAccountDto,
} from './dto/merchant-account.dto';
import { MerchantAccountsService } from './merchant-accounts.service';

@ApiTags('Merchant accounts')
@ApiProblems(AuthErrors.unauthorized, AuthErrors.forbidden, AuthErrors.instanceKeyRequired)
@Controller('merchant-accounts')
export class MerchantAccountsController {
  constructor(private readonly merchants: MerchantAccountsService) {}

  @Post()
  @HttpCode(201)
  @RequireInstanceScope('merchant-accounts.write')
  @ApiOperation({ summary: 'Create a merchant account (instance keys only)' })
  @ApiCreatedResponse({ type: MerchantAccountResponse })
  @ApiProblems(
    CommonErrors.validationFailed,
    MerchantAccountErrors.duplicateId,
    MerchantAccountErrors.featureUnavailable,
  )
  async create(@Body() body: CreateMerchantAccountDto): Promise<MerchantAccountResponse> {
    const { id, display_name, secure_fields_origins, ...features } = body;
    return MerchantAccountResponse.from(await this.merchants.create(id, display_name, features, secure_fields_origins));
  }

  @Get()
  @RequireInstanceScope('merchant-accounts.read')
  @ApiOperation({ summary: 'List merchant accounts, newest first, with cursor pagination (instance keys only)' })
  @Paginated({ default: 20, max: 100, scope: 'merchant-accounts', item: MerchantAccountResponse })
  list(@Keyset() keyset: KeysetRequest): Promise<MerchantAccount[]> {
    return this.merchants.list(keyset);
  }

  @Get(':id')
  @RequireInstanceScope('merchant-accounts.read')
  @ApiOperation({ summary: 'Get a merchant account (instance keys only)' })
  @ApiOkResponse({ type: MerchantAccountResponse })
  @ApiProblems(MerchantAccountErrors.notFound)
  async get(@Param('id') id: string): Promise<MerchantAccountResponse> {
    return MerchantAccountResponse.from(await this.merchants.get(id));
  }

  @Put(':id')
  @RequireInstanceScope('merchant-accounts.write')
  @ApiOperation({ summary: 'Update a merchant account (instance keys only)' })
  @ApiOkResponse({ type: MerchantAccountResponse })
  @ApiProblems(CommonErrors.validationFailed, MerchantAccountErrors.notFound, MerchantAccountErrors.featureUnavailable)
  async update(@Param('id') id: string, @Body() body: UpdateMerchantAccountDto): Promise<MerchantAccountResponse> {
    const { display_name, secure_fields_origins, ...features } = body;
    return MerchantAccountResponse.from(
      await this.merchants.update(id, {
        displayName: display_name,
        features,
        secureFieldsOrigins: secure_fields_origins,
      }),
    );
  }
}
