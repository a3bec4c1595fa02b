import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../auth/merchant-scoped';
import { MerchantAccountId } from '../auth/principal';
import { RequireScope } from '../auth/scopes';
import { ApiProblems } from '../common/openapi/api-problems';
import { KeysetRequest } from '../common/pagination/keyset';
import { Keyset, Paginated } from '../common/pagination/paginated.decorator';
import { CommonErrors } from '../common/problem/common.errors';
import {
  CreateVaultForwardConfigDto,
  UpdateVaultForwardConfigDto,
  VaultForwardConfigResponse,
} from './dto/vault-forward-config.dto';
import { VaultForwardConfig } from './vault-forward-config.entity';
import { VaultForwardConfigErrors } from './vault-forward-configs.errors';
import { VaultForwardConfigsList } from './vault-forward-configs.list';
import { VaultForwardConfigsService } from './vault-forward-configs.service';

@ApiTags('Forwarding configs')
@MerchantScoped()
@Controller('vault-forward/configs')
export class VaultForwardConfigsController {
  constructor(
    private readonly configs: VaultForwardConfigsService,
    private readonly lists: VaultForwardConfigsList,
  ) {}

  @Post()
  @HttpCode(201)
  @RequireScope('vault-forward-configs.write')
  @ApiOperation({ summary: 'Enable hosts (and methods) as forwarding targets' })
  @ApiCreatedResponse({ type: VaultForwardConfigResponse })
  @ApiProblems(CommonErrors.validationFailed)
  async create(
    @MerchantAccountId() merchant: string,
    @Body() body: CreateVaultForwardConfigDto,
  ): Promise<VaultForwardConfigResponse> {
    return VaultForwardConfigResponse.from(
      await this.configs.create(merchant, {
        displayName: body.display_name,
        hosts: body.hosts,
        methods: body.methods,
        enabled: body.enabled,
      }),
    );
  }

  @Get()
  @RequireScope('vault-forward-configs.read')
  @ApiOperation({ summary: 'List forwarding configs, newest first, with cursor pagination' })
  @Paginated({ default: 20, max: 100, scope: 'vault-forward-configs', item: VaultForwardConfigResponse })
  list(@MerchantAccountId() merchant: string, @Keyset() keyset: KeysetRequest): Promise<VaultForwardConfig[]> {
    return this.lists.list(merchant, keyset);
  }

  @Get(':id')
  @RequireScope('vault-forward-configs.read')
  @ApiOperation({ summary: 'Get a forwarding config' })
  @ApiOkResponse({ type: VaultForwardConfigResponse })
  @ApiProblems(VaultForwardConfigErrors.notFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<VaultForwardConfigResponse> {
    return VaultForwardConfigResponse.from(await this.configs.get(merchant, id));
  }

  @Put(':id')
  @RequireScope('vault-forward-configs.write')
  @ApiOperation({ summary: 'Update a forwarding config (only the fields sent)' })
  @ApiOkResponse({ type: VaultForwardConfigResponse })
  @ApiProblems(CommonErrors.validationFailed, VaultForwardConfigErrors.notFound)
  async update(
    @MerchantAccountId() merchant: string,
    @Param('id') id: string,
    @Body() body: UpdateVaultForwardConfigDto,
  ): Promise<VaultForwardConfigResponse> {
    return VaultForwardConfigResponse.from(
      await this.configs.update(merchant, id, {
        displayName: body.display_name,
        hosts: body.hosts,
        methods: body.methods,
        enabled: body.enabled,
      }),
    );
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScope('vault-forward-configs.write')
  @ApiOperation({ summary: 'Delete a forwarding config' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(VaultForwardConfigErrors.notFound)
  async delete(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<void> {
    await this.configs.delete(merchant, id);
  }
}
