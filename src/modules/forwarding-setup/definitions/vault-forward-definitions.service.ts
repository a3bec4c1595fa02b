import { Injectable } from '@nestjs/common';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException, ProblemFieldError } from '../../../platform/problem/problem';
import { isUuid } from '../../../platform/http/uuid';
import { isUniqueViolation } from '../../../platform/problem/database-errors';
import { VaultForwardConfigsService } from '../configs/vault-forward-configs.service';
import { CATALOG } from './catalog';
import {
  AuthenticationDefinition,
  authenticationDefinitionErrors,
  CUSTOM_PREFIX,
  customDefinition,
  Definition,
  parseOrigin,
} from './definition';
import { VaultForwardDefinition } from './vault-forward-definition.entity';
import { VaultForwardDefinitionErrors } from './vault-forward-definitions.errors';
import { VaultForwardDefinitionsRepository } from './vault-forward-definitions.repository';

/** Bounds the list (answered whole, like the catalog) and the table. */
const MAX_INSTANCE_DEFINITIONS = 200;

interface DefinitionInput {
  displayName: string;
  hosts: string[];
  authentications: AuthenticationDefinition[];
}

const CATALOG_BY_ID = new Map(CATALOG.map((d) => [d.id, d]));

/**
 * Definitions: the shipped catalog, those an instance administrator adds, and the custom definition
 * of each config made with its own hosts (`custom-<config id>`, derived from that config, visible to
 * its merchant account only).
 */
@Injectable()
export class VaultForwardDefinitionsService {
  constructor(
    private readonly rows: VaultForwardDefinitionsRepository,
    private readonly configs: VaultForwardConfigsService,
  ) {}

  /** The catalog, then the administrator's definitions by id. Custom definitions are not listed. */
  async list(): Promise<Definition[]> {
    const rows = await this.rows.all(MAX_INSTANCE_DEFINITIONS);
    return [...CATALOG, ...rows.map(fromRow)];
  }

  async get(merchantAccountId: string, id: string): Promise<Definition> {
    const catalog = CATALOG_BY_ID.get(id);
    if (catalog) return catalog;
    if (id.startsWith(CUSTOM_PREFIX)) {
      const configId = id.slice(CUSTOM_PREFIX.length);
      if (isUuid(configId)) {
        const config = await this.configs.find(merchantAccountId, configId);
        if (config && config.definitionId === id) return customDefinition(config.id, config.displayName, config.hosts);
      }
      throw notFound(id);
    }
    const row = id.length <= 50 ? await this.rows.find(id) : null;
    if (!row) throw notFound(id);
    return fromRow(row);
  }

  async create(id: string, input: DefinitionInput): Promise<Definition> {
    if (CATALOG_BY_ID.has(id)) throw exists(id);
    const hosts = this.validate(input);
    if ((await this.rows.count()) >= MAX_INSTANCE_DEFINITIONS) {
      throw new ProblemException(
        CommonErrors.validationFailed,
        `An instance holds at most ${MAX_INSTANCE_DEFINITIONS} definitions of its own; delete unused ones first.`,
        [{ location: 'body', name: 'id', message: `at most ${MAX_INSTANCE_DEFINITIONS} definitions` }],
      );
    }
    try {
      await this.rows.insert({
        id,
        displayName: input.displayName,
        hosts,
        authentications: input.authentications,
      });
    } catch (error) {
      if (isUniqueViolation(error, 'vault_forward_definitions_pkey')) throw exists(id);
      throw error;
    }
    return fromRow(await this.rows.get(id));
  }

  /** Replaces the definition; configs of it take its new hosts at once. */
  async update(id: string, input: DefinitionInput): Promise<Definition> {
    this.refuseReadOnly(id);
    const hosts = this.validate(input);
    const updated = await this.rows.update({
      id,
      displayName: input.displayName,
      hosts,
      authentications: input.authentications,
    });
    if (!updated) throw notFound(id);
    await this.configs.replaceDefinitionHosts(id, hosts);
    return fromRow(await this.rows.get(id));
  }

  async delete(id: string): Promise<void> {
    this.refuseReadOnly(id);
    const used = await this.configs.countByDefinition(id);
    if (used > 0) {
      throw new ProblemException(
        VaultForwardDefinitionErrors.inUse,
        `${used} config(s) use definition "${id}"; delete them first.`,
      );
    }
    const deleted = id.length <= 50 && (await this.rows.delete(id));
    if (!deleted) throw notFound(id);
  }

  private refuseReadOnly(id: string): void {
    if (CATALOG_BY_ID.has(id) || id.startsWith(CUSTOM_PREFIX)) {
      const whose = CATALOG_BY_ID.has(id) ? 'part of the shipped catalog' : 'a config’s own';
      throw new ProblemException(
        VaultForwardDefinitionErrors.readOnly,
        `Definition "${id.slice(0, 64)}" is ${whose}; it cannot be changed here.`,
      );
    }
  }

  /** The normalised origins, once every rule holds; else 400 naming each field. */
  private validate(input: DefinitionInput): string[] {
    const errors: ProblemFieldError[] = [];
    const hosts = input.hosts.map((host, index) => {
      const origin = parseOrigin(host);
      if (!origin)
        errors.push({
          location: 'body',
          name: `hosts[${index}]`,
          message: 'must be an origin such as https://api.example.com',
        });
      return origin ?? host;
    });
    errors.push(...authenticationDefinitionErrors(input.authentications));
    if (errors.length > 0) {
      throw new ProblemException(
        CommonErrors.validationFailed,
        `The definition is not valid: ${errors.map((e) => `${e.name} ${e.message}`).join('; ')}.`,
        errors,
      );
    }
    return [...new Set(hosts)];
  }
}

function fromRow(row: VaultForwardDefinition): Definition {
  return {
    id: row.id,
    display_name: row.displayName,
    hosts: row.hosts,
    authentications: row.authentications,
    source: 'instance',
  };
}

function notFound(id: string): ProblemException {
  return new ProblemException(VaultForwardDefinitionErrors.notFound, `No definition "${id.slice(0, 64)}" exists.`);
}

function exists(id: string): ProblemException {
  return new ProblemException(VaultForwardDefinitionErrors.exists, `A definition "${id}" exists already.`, [
    { location: 'body', name: 'id', message: 'exists already' },
  ]);
}
