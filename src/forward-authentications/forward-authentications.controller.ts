import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { MerchantScoped } from '../auth/merchant-scoped';
import { MerchantAccountId } from '../auth/principal';
import { RequireScope } from '../auth/scopes';
import { ApiProblems } from '../common/openapi/api-problems';
import { KeysetRequest } from '../common/pagination/keyset';
import { Keyset, Paginated } from '../common/pagination/paginated.decorator';
import { CommonErrors } from '../common/problem/common.errors';
import { VaultForwardConfigErrors } from '../vault-forward-configs/vault-forward-configs.errors';
import {
  AuthenticationKindsResponse,
  CreateForwardAuthenticationDto,
  ForwardAuthenticationResponse,
  UpdateForwardAuthenticationDto,
} from './dto/forward-authentication.dto';
import { ForwardAuthentication } from './forward-authentication.entity';
import { ForwardAuthenticationErrors } from './forward-authentications.errors';
import { ForwardAuthenticationsList } from './forward-authentications.list';
import { ForwardAuthenticationsService } from './forward-authentications.service';
import { AUTHENTICATION_KINDS, KINDS } from './kinds';
import { REQUEST_SCHEMA, RESPONSE_SCHEMA, UPDATE_SCHEMA_NAME } from './openapi';

@ApiTags('Forwarding authentication methods')
@MerchantScoped()
@Controller('vault-forward/configs/:config_id/authentications')
export class ForwardAuthenticationsController {
  constructor(
    private readonly methods: ForwardAuthenticationsService,
    private readonly lists: ForwardAuthenticationsList,
  ) {}

  @Post()
  @HttpCode(201)
  @RequireScope('vault-forward-authentications.write')
  @ApiOperation({ summary: 'Store an authentication method for a forwarding config (secret fields are write-only)' })
  @ApiBody({ schema: REQUEST_SCHEMA })
  @ApiCreatedResponse({ schema: RESPONSE_SCHEMA })
  @ApiProblems(CommonErrors.validationFailed, VaultForwardConfigErrors.notFound)
  async create(
    @MerchantAccountId() merchant: string,
    @Param('config_id') configId: string,
    @Body() body: CreateForwardAuthenticationDto,
  ): Promise<ForwardAuthenticationResponse> {
    return ForwardAuthenticationResponse.from(
      await this.methods.create(merchant, configId, { kind: body.kind, label: body.label, fields: body.fields }),
    );
  }

  @Get()
  @RequireScope('vault-forward-authentications.read')
  @ApiOperation({
    summary: 'List the authentication methods of a forwarding config, newest first, with cursor pagination',
  })
  @Paginated({
    default: 20,
    max: 100,
    scope: 'vault-forward-authentications',
    item: ForwardAuthenticationResponse,
    filters: (_query, request) => ({ config_id: request.params.config_id }),
  })
  @ApiProblems(VaultForwardConfigErrors.notFound)
  list(
    @MerchantAccountId() merchant: string,
    @Param('config_id') configId: string,
    @Keyset() keyset: KeysetRequest,
  ): Promise<ForwardAuthentication[]> {
    return this.lists.list(merchant, configId, keyset);
  }

  @Get(':id')
  @RequireScope('vault-forward-authentications.read')
  @ApiOperation({ summary: 'Get an authentication method (non-secret fields, derived facts, warnings)' })
  @ApiOkResponse({ schema: RESPONSE_SCHEMA })
  @ApiProblems(VaultForwardConfigErrors.notFound, ForwardAuthenticationErrors.notFound)
  async get(
    @MerchantAccountId() merchant: string,
    @Param('config_id') configId: string,
    @Param('id') id: string,
  ): Promise<ForwardAuthenticationResponse> {
    return ForwardAuthenticationResponse.from(await this.methods.get(merchant, configId, id));
  }

  @Put(':id')
  @RequireScope('vault-forward-authentications.write')
  @ApiOperation({ summary: 'Replace the label and/or the whole fields set of an authentication method' })
  @ApiBody({ schema: { $ref: `#/components/schemas/${UPDATE_SCHEMA_NAME}` } })
  @ApiOkResponse({ schema: RESPONSE_SCHEMA })
  @ApiProblems(CommonErrors.validationFailed, VaultForwardConfigErrors.notFound, ForwardAuthenticationErrors.notFound)
  async update(
    @MerchantAccountId() merchant: string,
    @Param('config_id') configId: string,
    @Param('id') id: string,
    @Body() body: UpdateForwardAuthenticationDto,
  ): Promise<ForwardAuthenticationResponse> {
    return ForwardAuthenticationResponse.from(
      await this.methods.update(merchant, configId, id, { label: body.label, fields: body.fields }),
    );
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScope('vault-forward-authentications.write')
  @ApiOperation({ summary: 'Delete an authentication method' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(VaultForwardConfigErrors.notFound, ForwardAuthenticationErrors.notFound)
  async delete(
    @MerchantAccountId() merchant: string,
    @Param('config_id') configId: string,
    @Param('id') id: string,
  ): Promise<void> {
    await this.methods.delete(merchant, configId, id);
  }
}

// Read-scoped like the methods themselves (a dashboard holds such a token anyway); every route but
// health and errors requires a token.
@ApiTags('Forwarding authentication methods')
@MerchantScoped()
@Controller('vault-forward/authentication-kinds')
export class AuthenticationKindsController {
  @Get()
  @RequireScope('vault-forward-authentications.read')
  @ApiOperation({
    summary:
      'The kinds of authentication method and their fields (which are secret, required, their formats), e.g. to build forms',
  })
  @ApiOkResponse({ type: AuthenticationKindsResponse })
  kinds(): AuthenticationKindsResponse {
    return {
      items: AUTHENTICATION_KINDS.map((kind) => ({
        kind,
        title: KINDS[kind].title,
        description: KINDS[kind].description,
        fields: KINDS[kind].fields.map((f) => ({
          name: f.name,
          secret: f.secret,
          required: f.required,
          format: f.format,
          ...(f.enum ? { enum: [...f.enum] } : {}),
          ...(f.default !== undefined ? { default: f.default } : {}),
          max_length: f.maxLength,
          description: f.description,
        })),
      })),
    };
  }
}
