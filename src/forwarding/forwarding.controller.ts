import { Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../auth/merchant-scoped';
import { MerchantAccountId } from '../auth/principal';
import { RequireScope } from '../auth/scopes';
import { ApiProblems } from '../common/openapi/api-problems';
import { Page, PageOf } from '../common/pagination/page';
import { PaginationErrors } from '../common/pagination/pagination.errors';
import { CommonErrors } from '../common/problem/common.errors';
import { ProblemException } from '../common/problem/problem';
import { CheckoutSessionErrors } from '../checkout-sessions/checkout-sessions.errors';
import { ForwardActivityQuery, ForwardActivityResponse } from './dto/forward-activity.dto';
import { ForwardRequestResponse, ListForwardRequestsQuery } from './dto/forward-request.dto';

/** The dashboard's chart: the last hour. */
const DEFAULT_ACTIVITY_MINUTES = 60;
import { ForwardRecordsReader } from './forward-records.reader';
import { ForwardAuthenticationErrors } from '../forward-authentications/forward-authentications.errors';
import { ForwardingErrors } from './forwarding.errors';
import { ForwardJobResponse } from '../forward-jobs/dto/forward-job.dto';
import { ForwardJobErrors } from '../forward-jobs/forward-jobs.errors';

@ApiTags('Forwarding')
@MerchantScoped()
@Controller('vault-forward')
export class ForwardingController {
  constructor(private readonly records: ForwardRecordsReader) {}

  @Post()
  @RequireScope('vault-forwards.write')
  @ApiOperation({
    summary: 'Forward a request to an enabled target with card placeholders filled from the vault',
    description:
      'The body (any content type, up to 1 MiB) is sent on byte for byte except for placeholders (docs/placeholders.md). The answer is the downstream’s status, headers (less hop-by-hop, set-cookie and x-vault-forward-*) and body, plus x-vault-forward-request-id; short answers are sent whole, longer ones stream (at most 10 MiB). Errors made by this service carry x-vault-forward-error: true.',
  })
  @ApiHeader({ name: 'x-vault-forward-url', required: true, description: 'Absolute https URL of the target.' })
  @ApiHeader({ name: 'x-vault-forward-http-method', required: true, description: 'GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS.' })
  @ApiHeader({ name: 'x-vault-forward-payment-methods', required: false, description: '1–100 payment method UUIDs, comma-separated; position X fills *_X placeholders.' })
  @ApiHeader({ name: 'x-vault-forward-authentications', required: false, description: 'Authentication method UUIDs (not available yet).' })
  @ApiHeader({ name: 'x-vault-forward-timeout', required: false, description: 'Whole seconds, 1–120 (default 30).' })
  @ApiHeader({ name: 'x-vault-forward-header-authorization', required: false, description: 'Sent downstream as Authorization. Any x-vault-forward-header-NAME is sent as NAME.' })
  @ApiHeader({ name: 'prefer', required: false, description: '`respond-async` (RFC 7240) queues the forward: checked as now, then answered 202 with the job (Location: /vault-forward/jobs/{id}, Preference-Applied: respond-async); a worker sends it and retries.' })
  @ApiHeader({ name: 'x-vault-forward-max-attempts', required: false, description: 'Queued forwards only: 1–20 attempts (default 5).' })
  @ApiHeader({ name: 'x-vault-forward-callback-url', required: false, description: 'Queued forwards only: where the ended job is POSTed (a host one of the merchant’s configs enables; https).' })
  @ApiHeader({ name: 'idempotency-key', required: false, description: '1–255 printable characters. On a queued POST or PATCH it permits retries after an answer, and is forwarded downstream.' })
  @ApiBody({ required: false, description: 'Sent on as is, placeholders filled.', schema: { type: 'string', format: 'binary' } })
  @ApiResponse({ status: 200, description: 'The downstream’s own answer, whatever its status.' })
  @ApiResponse({ status: 202, description: 'Prefer: respond-async: the job, queued.', type: ForwardJobResponse })
  @ApiProblems(
    CommonErrors.payloadTooLarge,
    ForwardingErrors.invalidHeader,
    ForwardingErrors.unknownHeader,
    ForwardingErrors.invalidPlaceholder,
    ForwardingErrors.insecureTarget,
    ForwardingErrors.endpointNotEnabled,
    ForwardingErrors.targetAddressForbidden,
    ForwardAuthenticationErrors.notUsable,
    ForwardAuthenticationErrors.conflict,
    ForwardAuthenticationErrors.invalid,
    ForwardAuthenticationErrors.unreadable,
    ForwardingErrors.downstreamUnreachable,
    ForwardingErrors.downstreamTimeout,
    ForwardingErrors.downstreamResponseTooLarge,
    ForwardingErrors.invalidPaymentMethodsHeader,
    ForwardingErrors.unknownPaymentMethod,
    ForwardingErrors.unknownCheckoutSession,
    CheckoutSessionErrors.expired,
    CheckoutSessionErrors.noCard,
    CheckoutSessionErrors.securityCodeErased,
    ForwardJobErrors.queueUnavailable,
  )
  forward(): never {
    // Documentation only: createApiApp's server hands every spelling of this path that the router
    // accepts (isForwardPath) to ForwardHttpHandler before fastify and Nest see the request. Should a
    // spelling ever slip past it, or a server be built without the handler, the caller still gets a
    // clean problem: the route is not served here.
    throw new ProblemException(CommonErrors.routeNotFound, 'No route matches this method and path.');
  }

  @Get('requests')
  @RequireScope('vault-forwards.read')
  @ApiOperation({ summary: 'List forward records, newest first, with cursor pagination (no bodies, no header values)' })
  @ApiOkResponse({ type: PageOf(ForwardRequestResponse) })
  @ApiProblems(CommonErrors.validationFailed, PaginationErrors.invalidCursor)
  list(@MerchantAccountId() merchant: string, @Query() query: ListForwardRequestsQuery): Promise<Page<ForwardRequestResponse>> {
    return this.records.list(merchant, query);
  }

  @Get('activity')
  @RequireScope('vault-forwards.read')
  @ApiOperation({ summary: 'Forwards per minute by outcome over the last minutes (default 60), from the forward records' })
  @ApiOkResponse({ type: ForwardActivityResponse })
  @ApiProblems(CommonErrors.validationFailed)
  activity(@MerchantAccountId() merchant: string, @Query() query: ForwardActivityQuery): Promise<ForwardActivityResponse> {
    return this.records.activity(merchant, query.minutes ?? DEFAULT_ACTIVITY_MINUTES);
  }

  @Get('requests/:id')
  @RequireScope('vault-forwards.read')
  @ApiOperation({ summary: 'Get one forward record by its request id' })
  @ApiProblems(ForwardingErrors.recordNotFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<ForwardRequestResponse> {
    return ForwardRequestResponse.from(await this.records.get(merchant, id));
  }
}
