import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { InboundRequestResponse, ListInboundRequestsQuery } from './dto/inbound-request.dto';
import { InboundRequest } from './inbound-request.entity';
import { InboundRequestsRepository } from './inbound-requests.repository';

@ApiTags('Inbound routes')
@MerchantScoped()
@Controller('vault-forward/inbound-requests')
export class InboundRequestsController {
  constructor(private readonly requests: InboundRequestsRepository) {}

  @Get()
  @RequireScope('vault-forward-inbound-routes.read')
  @ApiOperation({ summary: 'List the records of inbound requests, newest first, with cursor pagination' })
  @Paginated({ default: 20, max: 100, scope: 'vault-forward-inbound-requests', item: InboundRequestResponse })
  list(
    @MerchantAccountId() merchant: string,
    @Query() filters: ListInboundRequestsQuery,
    @Keyset() keyset: KeysetRequest,
  ): Promise<InboundRequest[]> {
    return this.requests.page(merchant, filters.route_id?.toLowerCase(), keyset);
  }
}
