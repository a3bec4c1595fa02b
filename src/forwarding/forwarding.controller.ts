import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../auth/merchant-scoped';
import { MerchantAccountId } from '../auth/principal';
import { RequireScope } from '../auth/scopes';
import { ApiProblems } from '../common/openapi/api-problems';
import { Page, PageOf } from '../common/pagination/page';
import { PaginationErrors } from '../common/pagination/pagination.errors';
import { CommonErrors } from '../common/problem/common.errors';
import { ForwardRequestResponse, ListForwardRequestsQuery } from './dto/forward-request.dto';
import { ForwardRecordsReader } from './forward-records.reader';
import { ForwardingErrors } from './forwarding.errors';

/** The forward records. POST /vault-forward itself is served by ForwardHttpHandler and documented by forward.openapi.ts. */
@ApiTags('Forwarding')
@MerchantScoped()
@Controller('vault-forward')
export class ForwardingController {
  constructor(private readonly records: ForwardRecordsReader) {}

  @Get('requests')
  @RequireScope('vault-forwards.read')
  @ApiOperation({ summary: 'List forward records, newest first, with cursor pagination (no bodies, no header values)' })
  @ApiOkResponse({ type: PageOf(ForwardRequestResponse) })
  @ApiProblems(CommonErrors.validationFailed, PaginationErrors.invalidCursor)
  list(@MerchantAccountId() merchant: string, @Query() query: ListForwardRequestsQuery): Promise<Page<ForwardRequestResponse>> {
    return this.records.list(merchant, query);
  }

  @Get('requests/:id')
  @RequireScope('vault-forwards.read')
  @ApiOperation({ summary: 'Get one forward record by its request id' })
  @ApiOkResponse({ type: ForwardRequestResponse })
  @ApiProblems(ForwardingErrors.recordNotFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<ForwardRequestResponse> {
    return ForwardRequestResponse.from(await this.records.get(merchant, id));
  }
}
