import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { CommonErrors } from '../../../platform/problem/common.errors';
import {
  CreateVaultForwardConfigDto,
  UpdateVaultForwardConfigDto,
  VaultForwardConfigResponse,
} from './dto/vault-forward-config.dto';
import { ProblemException } from '../../../platform/problem/problem';
import { ConfigDefinition, ConfigDefinitions } from './config-definitions';
import { ConfigAuthentications } from './config-authentications';
import { Embedded } from './dto/vault-forward-config.dto';
import { VaultForwardConfig } from './vault-forward-config.entity';
import { VaultForwardConfigErrors } from './vault-forward-configs.errors';
import { VaultForwardConfigsRepository } from './vault-forward-configs.repository';
import { VaultForwardConfigsService } from './vault-forward-configs.service';

@ApiTags('Forwarding configs')
@MerchantScoped()
@Controller('vault-forward/configs')
export class VaultForwardConfigsController {
  constructor(
    private readonly configs: VaultForwardConfigsService,
    private readonly repository: VaultForwardConfigsRepository,
    private readonly definitions: ConfigDefinitions,
    private readonly authentications: ConfigAuthentications,
  ) {}

  /** The configs with their methods embedded (Gr4vy's `authentications[]`). */
  private async embed<T extends VaultForwardConfig>(merchant: string, configs: T[]): Promise<Array<T & Embedded>> {
    const embedded = await this.authentications.embedded(
      merchant,
      configs.map((c) => c.id),
    );
    return configs.map((c) => Object.assign(c, { authentications: embedded.get(c.id) ?? [] }));
  }

  private async answer(merchant: string, config: VaultForwardConfig): Promise<VaultForwardConfigResponse> {
    const [embedded] = await this.embed(merchant, [config]);
    return VaultForwardConfigResponse.from(embedded);
  }

  @Post()
  @HttpCode(201)
  @RequireScope('vault-forward-configs.write')
  @ApiOperation({ summary: 'Enable a definition’s hosts (Gr4vy), or hosts of your own (ours), as forwarding targets' })
  @ApiCreatedResponse({ type: VaultForwardConfigResponse })
  @ApiProblems(CommonErrors.validationFailed, VaultForwardConfigErrors.duplicate)
  async create(
    @MerchantAccountId() merchant: string,
    @Body() body: CreateVaultForwardConfigDto,
  ): Promise<VaultForwardConfigResponse> {
    if (body.definition_id === undefined) {
      return this.answer(
        merchant,
        await this.configs.create(merchant, {
          displayName: body.display_name!,
          hosts: body.hosts!,
          methods: body.methods,
          enabled: body.enabled,
          responseRules: body.response_rules,
          unmatchedPan: body.unmatched_pan,
          recordBodies: body.record_bodies,
          recordBodiesRetentionDays: body.record_bodies_retention_days,
        }),
      );
    }
    const definition = await this.definitionFor(merchant, body);
    return this.answer(
      merchant,
      await this.configs.create(merchant, {
        definitionId: definition.id,
        displayName: body.display_name ?? definition.display_name,
        hosts: definition.hosts,
        methods: body.methods,
        enabled: body.enabled,
        responseRules: body.response_rules,
        unmatchedPan: body.unmatched_pan,
        recordBodies: body.record_bodies,
        recordBodiesRetentionDays: body.record_bodies_retention_days,
      }),
    );
  }

  /** A config of a definition takes the definition's hosts; its own would make it another definition. */
  private async definitionFor(merchant: string, body: CreateVaultForwardConfigDto): Promise<ConfigDefinition> {
    if (body.hosts !== undefined) {
      throw new ProblemException(
        CommonErrors.validationFailed,
        'A config of a definition takes the definition’s hosts; send either definition_id or hosts.',
        [{ location: 'body', name: 'hosts', message: 'not allowed with definition_id' }],
      );
    }
    const id = body.definition_id!;
    const definition = await this.definitions.find(merchant, id);
    if (definition) return definition;
    throw new ProblemException(
      CommonErrors.validationFailed,
      `No definition "${id}" exists; GET /vault-forward/definitions lists them.`,
      [{ location: 'body', name: 'definition_id', message: 'no such definition' }],
    );
  }

  @Get()
  @RequireScope('vault-forward-configs.read')
  @ApiOperation({ summary: 'List forwarding configs, newest first, with cursor pagination' })
  @Paginated({ default: 20, max: 100, scope: 'vault-forward-configs', item: VaultForwardConfigResponse })
  async list(@MerchantAccountId() merchant: string, @Keyset() keyset: KeysetRequest): Promise<VaultForwardConfig[]> {
    return this.embed(merchant, await this.repository.page(merchant, keyset));
  }

  @Get(':id')
  @RequireScope('vault-forward-configs.read')
  @ApiOperation({ summary: 'Get a forwarding config' })
  @ApiOkResponse({ type: VaultForwardConfigResponse })
  @ApiProblems(VaultForwardConfigErrors.notFound)
  async get(@MerchantAccountId() merchant: string, @Param('id') id: string): Promise<VaultForwardConfigResponse> {
    return this.answer(merchant, await this.configs.get(merchant, id));
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
    return this.answer(
      merchant,
      await this.configs.update(merchant, id, {
        displayName: body.display_name,
        hosts: body.hosts,
        methods: body.methods,
        enabled: body.enabled,
        responseRules: body.response_rules,
        unmatchedPan: body.unmatched_pan,
        recordBodies: body.record_bodies,
        recordBodiesRetentionDays: body.record_bodies_retention_days,
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
