import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ForwardActivityQuery, ForwardActivityResponse } from './dto/forward-activity.dto';
import { ForwardRecordDetailResponse, ForwardRecordResponse } from './dto/forward-record.dto';
import { ForwardRecordEntity } from './forward-record.entity';

/** The dashboard's chart: the last hour. */
const DEFAULT_ACTIVITY_MINUTES = 60;
import { ForwardRecordsReader } from './forward-records.reader';
import { ForwardRecordErrors } from './forward-records.errors';

/**
 * The forward records. POST /vault-forward itself is served by ForwardHttpHandler and documented by
 * modules/forwarding/entry/forward.openapi.ts. Still named ForwardingController: the class name makes the OpenAPI operationIds
 * (ForwardingController_list, …) that generated clients use.
 */
@ApiTags('Forwarding')
@MerchantScoped()
@Controller('vault-forward')
export class ForwardingController {
  constructor(private readonly records: ForwardRecordsReader) {}

  @Get('requests')
  @RequireScope('vault-forwards.read')
  @ApiOperation({
    summary: 'List forward records, newest first, with cursor pagination (no bodies, no header values: see /{id})',
  })
  @Paginated({ default: 20, max: 100, scope: 'vault-forward-requests', item: ForwardRecordResponse })
  list(@MerchantAccountId() merchant: string, @Keyset() keyset: KeysetRequest): Promise<ForwardRecordEntity[]> {
    return this.records.list(merchant, keyset);
  }

  @Get('activity')
  @RequireScope('vault-forwards.read')
  @ApiOperation({
    summary: 'Forwards per minute by outcome over the last minutes (default 60), from the forward records',
  })
  @ApiOkResponse({ type: ForwardActivityResponse })
  @ApiProblems(CommonErrors.validationFailed)
  activity(
    @MerchantAccountId() merchant: string,
    @Query() query: ForwardActivityQuery,
  ): Promise<ForwardActivityResponse> {
    return this.records.activity(merchant, query.minutes ?? DEFAULT_ACTIVITY_MINUTES);
  }

  @Get('requests/:id')
  @RequireScope('vault-forwards.read')
  @ApiOperation({
    summary: 'Get one forward record by its request id, with its redacted request and answer while they are kept',
  })
  @ApiOkResponse({ type: ForwardRecordDetailResponse })
  @ApiProblems(ForwardRecordErrors.recordNotFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<ForwardRecordDetailResponse> {
    const { record, bodies } = await this.records.get(merchant, id);
    return ForwardRecordDetailResponse.detail(record, bodies);
  }
}
