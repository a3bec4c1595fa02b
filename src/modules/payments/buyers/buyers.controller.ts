import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { Buyer } from './buyer.entity';
import { BuyerErrors } from './buyers.errors';
import { BuyersRepository } from './buyers.repository';
import { BuyersService } from './buyers.service';
import { BuyerResponse, CreateBuyerDto, ListBuyersQuery, UpdateBuyerDto } from './dto/buyer.dto';

@ApiTags('Buyers')
@MerchantScoped()
@Controller('buyers')
export class BuyersController {
  constructor(
    private readonly buyers: BuyersService,
    private readonly repository: BuyersRepository,
  ) {}

  @Post()
  @HttpCode(201)
  @RequireScope('buyers.write')
  @ApiOperation({ summary: 'Create a buyer' })
  @ApiCreatedResponse({ type: BuyerResponse })
  @ApiProblems(CommonErrors.validationFailed, BuyerErrors.duplicateExternalIdentifier)
  async create(@MerchantAccountId() merchant: string, @Body() body: CreateBuyerDto): Promise<BuyerResponse> {
    return BuyerResponse.from(await this.buyers.create(merchant, body.display_name, body.external_identifier ?? null));
  }

  @Get()
  @RequireScope('buyers.read')
  @ApiOperation({ summary: 'List buyers, newest first, with cursor pagination (limit 1–100, default 20)' })
  @Paginated({ default: 20, max: 100, scope: 'buyers', item: BuyerResponse })
  list(
    @MerchantAccountId() merchant: string,
    @Query() filters: ListBuyersQuery,
    @Keyset() keyset: KeysetRequest,
  ): Promise<Buyer[]> {
    return this.repository.page(merchant, filters, keyset);
  }

  @Get(':id')
  @RequireScope('buyers.read')
  @ApiOperation({ summary: 'Get a buyer' })
  @ApiOkResponse({ type: BuyerResponse })
  @ApiProblems(BuyerErrors.notFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<BuyerResponse> {
    return BuyerResponse.from(await this.buyers.get(merchant, id));
  }

  @Put(':id')
  @RequireScope('buyers.write')
  @ApiOperation({ summary: 'Update a buyer (only the fields sent; external_identifier: null clears it)' })
  @ApiOkResponse({ type: BuyerResponse })
  @ApiProblems(CommonErrors.validationFailed, BuyerErrors.notFound, BuyerErrors.duplicateExternalIdentifier)
  async update(
    @MerchantAccountId() merchant: string,
    @Param('id') id: string,
    @Body() body: UpdateBuyerDto,
  ): Promise<BuyerResponse> {
    return BuyerResponse.from(
      await this.buyers.update(merchant, id, {
        displayName: body.display_name,
        externalIdentifier: body.external_identifier,
      }),
    );
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScope('buyers.write')
  @ApiOperation({ summary: 'Delete a buyer' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(BuyerErrors.notFound)
  async delete(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<void> {
    await this.buyers.delete(merchant, id);
  }
}
