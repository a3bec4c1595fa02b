import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { isUuid } from '../../../platform/http/uuid';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { ProblemException } from '../../../platform/problem/problem';
import {
  InboundRequestDetailResponse,
  InboundRequestResponse,
  ListInboundRequestsQuery,
} from './dto/inbound-request.dto';
import { InboundRequestBodies } from './inbound-request-bodies';
import { InboundRequest } from './inbound-request.entity';
import { InboundRequestErrors } from './inbound-requests.errors';
import { InboundRequestsRepository } from './inbound-requests.repository';

@ApiTags('Inbound routes')
@MerchantScoped()
@Controller('vault-forward/inbound-requests')
export class InboundRequestsController {
  constructor(
    private readonly requests: InboundRequestsRepository,
    private readonly bodies: InboundRequestBodies,
  ) {}

  @Get()
  @RequireScope('vault-forward-inbound-routes.read')
  @ApiOperation({ summary: 'List the records of inbound requests, newest first, with cursor pagination (no bodies)' })
  @Paginated({ default: 20, max: 100, scope: 'vault-forward-inbound-requests', item: InboundRequestResponse })
  list(
    @MerchantAccountId() merchant: string,
    @Query() filters: ListInboundRequestsQuery,
    @Keyset() keyset: KeysetRequest,
  ): Promise<InboundRequest[]> {
    return this.requests.page(merchant, filters.route_id?.toLowerCase(), keyset);
  }

  @Get(':id')
  @RequireScope('vault-forward-inbound-routes.read')
  @ApiOperation({ summary: 'Get the record of an inbound request, with its bodies while kept (record_bodies)' })
  @ApiOkResponse({ type: InboundRequestDetailResponse })
  @ApiProblems(InboundRequestErrors.notFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<InboundRequestDetailResponse> {
    const record = isUuid(id) ? await this.requests.find(merchant, id.toLowerCase()) : null;
    if (record === null)
      throw new ProblemException(
        InboundRequestErrors.notFound,
        `No inbound request "${id.slice(0, 64)}" exists in this merchant account.`,
      );
    return InboundRequestDetailResponse.detail(record, this.bodies.open(record));
  }
}
