import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthErrors } from '../../merchants/access/auth.errors';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireInstanceScope, RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { CommonErrors } from '../../../platform/problem/common.errors';
import {
  authenticationsOf,
  CreateVaultForwardDefinitionDto,
  UpdateVaultForwardDefinitionDto,
  VaultForwardDefinitionResponse,
  VaultForwardDefinitionsResponse,
} from './dto/vault-forward-definition.dto';
import { VaultForwardDefinitionErrors } from './vault-forward-definitions.errors';
import { VaultForwardDefinitionsService } from './vault-forward-definitions.service';

@ApiTags('Forwarding definitions')
@Controller('vault-forward/definitions')
export class VaultForwardDefinitionsController {
  constructor(private readonly definitions: VaultForwardDefinitionsService) {}

  @Get()
  @MerchantScoped()
  @RequireScope('vault-forward-definitions.read')
  @ApiOperation({
    summary: 'List the definitions: the shipped catalog and the instance’s own (a small set, answered whole)',
  })
  @ApiOkResponse({ type: VaultForwardDefinitionsResponse })
  async list(): Promise<VaultForwardDefinitionsResponse> {
    return { items: (await this.definitions.list()).map(VaultForwardDefinitionResponse.from) };
  }

  @Get(':id')
  @MerchantScoped()
  @RequireScope('vault-forward-definitions.read')
  @ApiOperation({ summary: 'Get a definition (also `custom-<config id>`, the own definition of a config)' })
  @ApiOkResponse({ type: VaultForwardDefinitionResponse })
  @ApiProblems(VaultForwardDefinitionErrors.notFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<VaultForwardDefinitionResponse> {
    return VaultForwardDefinitionResponse.from(await this.definitions.get(merchant, id));
  }

  @Post()
  @HttpCode(201)
  @RequireInstanceScope('vault-forward-definitions.write')
  @ApiOperation({ summary: 'Add a definition to the instance (instance keys only)' })
  @ApiCreatedResponse({ type: VaultForwardDefinitionResponse })
  @ApiProblems(
    AuthErrors.unauthorized,
    AuthErrors.forbidden,
    AuthErrors.instanceKeyRequired,
    CommonErrors.validationFailed,
    VaultForwardDefinitionErrors.exists,
  )
  async create(@Body() body: CreateVaultForwardDefinitionDto): Promise<VaultForwardDefinitionResponse> {
    return VaultForwardDefinitionResponse.from(
      await this.definitions.create(body.id, {
        displayName: body.display_name,
        hosts: body.hosts,
        authentications: authenticationsOf(body.authentications),
      }),
    );
  }

  @Put(':id')
  @RequireInstanceScope('vault-forward-definitions.write')
  @ApiOperation({
    summary: 'Replace an instance definition; its configs take the new hosts at once (instance keys only)',
  })
  @ApiOkResponse({ type: VaultForwardDefinitionResponse })
  @ApiProblems(
    AuthErrors.unauthorized,
    AuthErrors.forbidden,
    AuthErrors.instanceKeyRequired,
    CommonErrors.validationFailed,
    VaultForwardDefinitionErrors.notFound,
    VaultForwardDefinitionErrors.readOnly,
  )
  async update(
    @Param('id') id: string,
    @Body() body: UpdateVaultForwardDefinitionDto,
  ): Promise<VaultForwardDefinitionResponse> {
    return VaultForwardDefinitionResponse.from(
      await this.definitions.update(id, {
        displayName: body.display_name,
        hosts: body.hosts,
        authentications: authenticationsOf(body.authentications),
      }),
    );
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireInstanceScope('vault-forward-definitions.write')
  @ApiOperation({ summary: 'Delete an instance definition no config uses (instance keys only)' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(
    AuthErrors.unauthorized,
    AuthErrors.forbidden,
    AuthErrors.instanceKeyRequired,
    VaultForwardDefinitionErrors.notFound,
    VaultForwardDefinitionErrors.readOnly,
    VaultForwardDefinitionErrors.inUse,
  )
  async delete(@Param('id') id: string): Promise<void> {
    await this.definitions.delete(id);
  }
}
