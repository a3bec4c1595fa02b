import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { MerchantScoped } from '../../merchants/auth/merchant-scoped';
import { MerchantAccountId } from '../../merchants/access/principal';
import { RequireScope } from '../../merchants/access/scopes';
import { ApiProblems } from '../../../platform/openapi/api-problems';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { Keyset, Paginated } from '../../../platform/pagination/paginated.decorator';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { VaultForwardConfigErrors } from '../configs/vault-forward-configs.errors';
import { ProblemException } from '../../../platform/problem/problem';
import {
  AuthenticationKindsResponse,
  CreateForwardAuthenticationDto,
  ForwardAuthenticationResponse,
  Gr4vyForwardAuthenticationResponse,
  isDefinitionKind,
  RenderedMethod,
  UpdateForwardAuthenticationDto,
} from './dto/forward-authentication.dto';
import { ForwardAuthentication } from './forward-authentication.entity';
import { ForwardAuthenticationErrors } from './forward-authentications.errors';
import { ForwardAuthenticationsService } from './forward-authentications.service';
import { AUTHENTICATION_KINDS, KINDS } from '../authentication-kinds/kinds';
import { REQUEST_SCHEMA, RESPONSE_SCHEMA, UPDATE_SCHEMA_NAME } from './openapi';

@ApiTags('Forwarding authentication methods')
@MerchantScoped()
@Controller('vault-forward/configs/:config_id/authentications')
export class ForwardAuthenticationsController {
  constructor(
    private readonly methods: ForwardAuthenticationsService,
    @Inject(CLOCK) private readonly clock: Clock,
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
  ): Promise<AnyAuthenticationResponse> {
    if (isDefinitionKind(body.kind)) {
      refuseOurs(body.label, 'label', 'display_name');
      const created = await this.methods.createFromDefinition(merchant, configId, {
        kind: body.kind,
        displayName: body.display_name!,
        fields: body.fields,
      });
      return this.render(merchant, configId, created);
    }
    refuseOurs(body.display_name, 'display_name', 'label', true);
    const created = await this.methods.create(merchant, configId, {
      kind: body.kind,
      label: body.label!,
      fields: body.fields as Record<string, unknown>,
    });
    return ForwardAuthenticationResponse.from({ ...created, readAtMs: this.clock.epochMs() });
  }

  /** One method in its shape: Gr4vy's needs its config's definition. */
  private async render(
    merchant: string,
    configId: string,
    method: ForwardAuthentication,
  ): Promise<AnyAuthenticationResponse> {
    const readAtMs = this.clock.epochMs();
    if (method.shape !== 'gr4vy') return ForwardAuthenticationResponse.from({ ...method, readAtMs });
    const definitions = await this.methods.definitionsByKind(merchant, configId);
    return ForwardAuthenticationResponse.from({ ...method, readAtMs, definition: definitions.get(method.kind) });
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
  async list(
    @MerchantAccountId() merchant: string,
    @Param('config_id') configId: string,
    @Keyset() keyset: KeysetRequest,
  ): Promise<RenderedMethod[]> {
    const rows = await this.methods.list(merchant, configId, keyset);
    const readAtMs = this.clock.epochMs();
    if (!rows.some((row) => row.shape === 'gr4vy')) return rows.map((row) => Object.assign(row, { readAtMs }));
    const definitions = await this.methods.definitionsByKind(merchant, configId);
    return rows.map((row) => Object.assign(row, { readAtMs, definition: definitions.get(row.kind) }));
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
  ): Promise<AnyAuthenticationResponse> {
    return this.render(merchant, configId, await this.methods.get(merchant, configId, id));
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
  ): Promise<AnyAuthenticationResponse> {
    // Gr4vy's update names display_name or sends fields as [{key, value}]; ours, label or a fields object.
    if (body.display_name !== undefined || Array.isArray(body.fields)) {
      refuseOurs(body.label, 'label', 'display_name');
      const updated = await this.methods.updateFromDefinition(merchant, configId, id, {
        displayName: body.display_name,
        fields: body.fields,
      });
      return this.render(merchant, configId, updated);
    }
    if (body.fields !== undefined && (typeof body.fields !== 'object' || body.fields === null)) {
      throw new ProblemException(
        CommonErrors.validationFailed,
        'fields must be an object (ours) or an array (Gr4vy’s).',
        [{ location: 'body', name: 'fields', message: 'must be an object or an array of {key, value}' }],
      );
    }
    return this.render(
      merchant,
      configId,
      await this.methods.update(merchant, configId, id, {
        label: body.label,
        fields: body.fields,
      }),
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

type AnyAuthenticationResponse = ForwardAuthenticationResponse | Gr4vyForwardAuthenticationResponse;

/** The two shapes do not mix: ours names a method by `label`, Gr4vy's by `display_name`. */
function refuseOurs(value: unknown, name: string, instead: string, ours = false): void {
  if (value === undefined) return;
  const kinds = ours ? `our kinds (${AUTHENTICATION_KINDS.join(', ')})` : 'Gr4vy’s kinds (mle, mtls, signature)';
  throw new ProblemException(CommonErrors.validationFailed, `${name} does not go with ${kinds}; send ${instead}.`, [
    { location: 'body', name, message: `not with these kinds; send ${instead}` },
  ]);
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
