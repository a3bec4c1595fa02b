import { randomUUID } from 'node:crypto';
import { Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MerchantScoped } from '../auth/merchant-scoped';
import { MerchantAccountId } from '../auth/principal';
import { RequireScope } from '../auth/scopes';
import { ApiProblems } from '../common/openapi/api-problems';
import { Page, PageOf } from '../common/pagination/page';
import { PaginationErrors } from '../common/pagination/pagination.errors';
import { CommonErrors } from '../common/problem/common.errors';
import { VaultErrors } from '../vault/vault.errors';
import { ForwardRequestResponse, ListForwardRequestsQuery } from './dto/forward-request.dto';
import { ForwardRecordsService } from './forward-records.service';
import { ForwardingErrors } from './forwarding.errors';
import { ForwardingService } from './forwarding.service';

@ApiTags('Forwarding')
@MerchantScoped()
@Controller('vault-forward')
export class ForwardingController {
  constructor(
    private readonly forwarding: ForwardingService,
    private readonly records: ForwardRecordsService,
  ) {}

  @Post()
  @RequireScope('vault-forwards.write')
  @ApiOperation({
    summary: 'Forward a request to an enabled target with card placeholders filled from the vault',
    description:
      'The body (any content type, up to 1 MiB) is sent on byte for byte except for placeholders (docs/placeholders.md). The answer is the downstream’s status, headers (less hop-by-hop and set-cookie) and body, plus x-vault-forward-request-id. Errors made by this service carry x-vault-forward-error: true.',
  })
  @ApiHeader({ name: 'x-vault-forward-url', required: true, description: 'Absolute https URL of the target.' })
  @ApiHeader({ name: 'x-vault-forward-http-method', required: true, description: 'GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS.' })
  @ApiHeader({ name: 'x-vault-forward-payment-methods', required: false, description: '1–100 payment method UUIDs, comma-separated; position X fills *_X placeholders.' })
  @ApiHeader({ name: 'x-vault-forward-authentications', required: false, description: 'Authentication method UUIDs (not available yet).' })
  @ApiHeader({ name: 'x-vault-forward-timeout', required: false, description: 'Whole seconds, 1–120 (default 30).' })
  @ApiHeader({ name: 'x-vault-forward-header-authorization', required: false, description: 'Sent downstream as Authorization. Any x-vault-forward-header-NAME is sent as NAME.' })
  @ApiBody({ required: false, description: 'Sent on as is, placeholders filled.', schema: { type: 'string', format: 'binary' } })
  @ApiResponse({ status: 200, description: 'The downstream’s own answer, whatever its status.' })
  @ApiProblems(
    CommonErrors.payloadTooLarge,
    ForwardingErrors.invalidHeader,
    ForwardingErrors.unknownHeader,
    ForwardingErrors.invalidPlaceholder,
    ForwardingErrors.insecureTarget,
    ForwardingErrors.endpointNotEnabled,
    ForwardingErrors.targetAddressForbidden,
    ForwardingErrors.notImplemented,
    ForwardingErrors.downstreamUnreachable,
    ForwardingErrors.downstreamTimeout,
    ForwardingErrors.downstreamResponseTooLarge,
    VaultErrors.invalidPaymentMethodsHeader,
    VaultErrors.unknownPaymentMethod,
  )
  async forward(@MerchantAccountId() merchant: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // The forward's id names its record, so it must be unique: it is the request id unless the caller
    // chose that (x-request-id, kept for tracing), in which case the forward gets its own.
    const requestId = request.headers['x-request-id'] === undefined ? String((request.raw as { id?: unknown }).id ?? request.id) : randomUUID();
    const response = await this.forwarding.forward({
      merchantAccountId: merchant,
      requestId,
      headers: request.headers,
      rawHeaders: request.raw.rawHeaders,
      body: Buffer.isBuffer(request.body) ? request.body : undefined,
    });
    await reply
      .status(response.status)
      .headers({ ...response.headers, 'x-vault-forward-request-id': requestId })
      .send(response.body);
  }

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
  @ApiProblems(ForwardingErrors.recordNotFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<ForwardRequestResponse> {
    return ForwardRequestResponse.from(await this.records.get(merchant, id));
  }
}
