import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { CreateInboundRouteDto, InboundRouteResponse, UpdateInboundRouteDto } from './dto/inbound-route.dto';
import { InboundRoute } from './inbound-route.entity';
import { InboundRouteErrors } from './inbound-routes.errors';
import { InboundRoutesService } from './inbound-routes.service';

@ApiTags('Inbound routes')
@MerchantScoped()
@Controller('vault-forward/inbound-routes')
export class InboundRoutesController {
  constructor(private readonly routes: InboundRoutesService) {}

  @Post()
  @HttpCode(201)
  @RequireScope('vault-forward-inbound-routes.write')
  @ApiOperation({ summary: 'Create an inbound route: callers send card data to it, the merchant’s upstream gets ids' })
  @ApiCreatedResponse({ type: InboundRouteResponse })
  @ApiProblems(CommonErrors.validationFailed, InboundRouteErrors.mutualTlsUnavailable)
  async create(
    @MerchantAccountId() merchant: string,
    @Body() body: CreateInboundRouteDto,
  ): Promise<InboundRouteResponse> {
    return InboundRouteResponse.from(await this.routes.create(merchant, body));
  }

  @Get()
  @RequireScope('vault-forward-inbound-routes.read')
  @ApiOperation({ summary: 'List inbound routes, newest first, with cursor pagination' })
  @Paginated({ default: 20, max: 100, scope: 'vault-forward-inbound-routes', item: InboundRouteResponse })
  list(@MerchantAccountId() merchant: string, @Keyset() keyset: KeysetRequest): Promise<InboundRoute[]> {
    return this.routes.list(merchant, keyset);
  }

  @Get(':id')
  @RequireScope('vault-forward-inbound-routes.read')
  @ApiOperation({ summary: 'Get an inbound route' })
  @ApiOkResponse({ type: InboundRouteResponse })
  @ApiProblems(InboundRouteErrors.notFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<InboundRouteResponse> {
    return InboundRouteResponse.from(await this.routes.get(merchant, id));
  }

  @Put(':id')
  @RequireScope('vault-forward-inbound-routes.write')
  @ApiOperation({ summary: 'Update an inbound route (only the fields sent)' })
  @ApiOkResponse({ type: InboundRouteResponse })
  @ApiProblems(CommonErrors.validationFailed, InboundRouteErrors.notFound, InboundRouteErrors.mutualTlsUnavailable)
  async update(
    @MerchantAccountId() merchant: string,
    @Param('id') id: string,
    @Body() body: UpdateInboundRouteDto,
  ): Promise<InboundRouteResponse> {
    return InboundRouteResponse.from(await this.routes.update(merchant, id, body));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScope('vault-forward-inbound-routes.write')
  @ApiOperation({ summary: 'Delete an inbound route' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(InboundRouteErrors.notFound)
  async delete(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<void> {
    await this.routes.delete(merchant, id);
  }
}
