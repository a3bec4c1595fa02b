import { Controller, Delete, Get, HttpCode, Param, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { ApiKey } from './api-key.entity';
import { ApiKeyOwner, ApiKeysService } from './api-keys.service';
import { AuthErrors } from '../access/auth.errors';
import { ApiKeyResponse, ListApiKeysQuery } from './dto/api-key.dto';
import { CurrentPrincipal, Principal } from '../access/principal';
import { RequireOwnerScope } from '../access/scopes';

/** The AuthGuard has put the key's own merchant account on the principal: null is an instance key. */
function ownerOf(principal: Principal): ApiKeyOwner {
  return principal.keyMerchantAccountId === null
    ? { kind: 'instance' }
    : { kind: 'merchant', merchantAccountId: principal.keyMerchantAccountId };
}

@ApiTags('API keys')
@ApiProblems(AuthErrors.unauthorized, AuthErrors.forbidden, AuthErrors.merchantAccountMismatch)
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Get()
  @RequireOwnerScope('api-keys.read')
  @ApiOperation({
    summary: 'List API keys, revoked ones included, newest first, with cursor pagination',
    description:
      "Instance keys see every key (filter with merchant_account_id); a merchant key sees its own merchant account's keys.",
  })
  @Paginated({
    default: 20,
    max: 100,
    scope: 'api-keys',
    item: ApiKeyResponse,
    // A merchant key's cursors are its merchant account's; an instance key's are the instance's.
    merchantAccountId: (request) => request.principal?.keyMerchantAccountId ?? null,
  })
  list(
    @CurrentPrincipal() principal: Principal,
    @Query() filters: ListApiKeysQuery,
    @Keyset() keyset: KeysetRequest,
  ): Promise<ApiKey[]> {
    return this.apiKeys.list(ownerOf(principal), filters, keyset);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireOwnerScope('api-keys.write')
  @ApiOperation({
    summary: 'Revoke an API key',
    description:
      'Sets revoked_at; the key and every token signed with it stop working in every API process within about a ' +
      "second. Instance keys may revoke any key, a merchant key its own merchant account's keys.",
  })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiProblems(AuthErrors.apiKeyNotFound)
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.apiKeys.revoke(ownerOf(principal), id);
  }
}
