import { Injectable } from '@nestjs/common';
import { ProblemException } from '../../../platform/problem/problem';
import { ConfigDefinition, ConfigDefinitions } from '../configs/config-definitions';
import { CUSTOM_PREFIX } from './definition';
import { VaultForwardDefinitionErrors } from './vault-forward-definitions.errors';
import { VaultForwardDefinitionsService } from './vault-forward-definitions.service';

/** The definitions a config may be made from: the catalog's and the instance's, never a generated `custom-` one. */
@Injectable()
export class DefinitionsForConfigs extends ConfigDefinitions {
  constructor(private readonly definitions: VaultForwardDefinitionsService) {
    super();
  }

  async find(merchantAccountId: string, id: string): Promise<ConfigDefinition | null> {
    if (id.startsWith(CUSTOM_PREFIX)) return null;
    try {
      return await this.definitions.get(merchantAccountId, id);
    } catch (error) {
      if (error instanceof ProblemException && error.definition === VaultForwardDefinitionErrors.notFound) return null;
      throw error;
    }
  }
}
