import { Controller, Delete, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { ForwardJobResponse, ListForwardJobsQuery } from './dto/forward-job.dto';
import { ForwardJob } from './rows/forward-job.entity';
import { ForwardJobErrors } from './forward-jobs.errors';
import { ForwardJobsService } from './forward-jobs.service';

/**
 * Queued forwards (POST /vault-forward with Prefer: respond-async, documented on that route). The
 * job's state is read from PostgreSQL; the queue only carries the work.
 */
@ApiTags('Forwarding')
@MerchantScoped()
@Controller('vault-forward/jobs')
export class ForwardJobsController {
  constructor(private readonly jobs: ForwardJobsService) {}

  @Get()
  @RequireScope('vault-forwards.read')
  @ApiOperation({ summary: 'List queued forwards, newest first, with cursor pagination (without their responses)' })
  // Lists leave the response out (one decryption per row); GET /vault-forward/jobs/{id} has it.
  @Paginated({ default: 20, max: 100, scope: 'vault-forward-jobs', item: ForwardJobResponse })
  list(
    @MerchantAccountId() merchant: string,
    @Query() filters: ListForwardJobsQuery,
    @Keyset() keyset: KeysetRequest,
  ): Promise<ForwardJob[]> {
    return this.jobs.list(merchant, filters, keyset);
  }

  @Get(':id')
  @RequireScope('vault-forwards.read')
  @ApiOperation({ summary: 'Get a queued forward: its status, attempts and, once ended, the downstream’s answer' })
  @ApiOkResponse({ type: ForwardJobResponse })
  @ApiProblems(ForwardJobErrors.jobNotFound)
  get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<ForwardJobResponse> {
    return this.jobs.get(merchant, id);
  }

  @Delete(':id')
  @RequireScope('vault-forwards.write')
  @ApiOperation({
    summary: 'Cancel a queued forward that is waiting for an attempt (not one that is running or has ended)',
  })
  @ApiOkResponse({ type: ForwardJobResponse })
  @ApiProblems(ForwardJobErrors.jobNotFound, ForwardJobErrors.jobNotCancellable)
  cancel(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<ForwardJobResponse> {
    return this.jobs.cancel(merchant, id);
  }
}
