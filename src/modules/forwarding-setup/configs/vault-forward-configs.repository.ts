import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import type { ResponseRuleInput, UnmatchedPanAction } from './response-rules';
import { VaultForwardConfig } from './vault-forward-config.entity';

export interface EnabledConfigRow {
  merchant_account_id: string;
  id: string;
  hosts: string[];
  methods: string[];
  response_rules: ResponseRuleInput[];
  unmatched_pan: UnmatchedPanAction;
  record_bodies: boolean;
  record_bodies_retention_days: number;
}
const ENABLED_COLUMNS =
  'merchant_account_id, id, hosts, methods, response_rules, unmatched_pan, record_bodies, record_bodies_retention_days';

type NewConfig = Pick<
  VaultForwardConfig,
  | 'id'
  | 'merchantAccountId'
  | 'definitionId'
  | 'displayName'
  | 'hosts'
  | 'methods'
  | 'enabled'
  | 'responseRules'
  | 'unmatchedPan'
  | 'recordBodies'
  | 'recordBodiesRetentionDays'
>;

/** Null leaves a column as it is; `responseRules` is JSON text. */
interface ConfigUpdate {
  displayName: string | null;
  hosts: string[] | null;
  methods: string[] | null;
  enabled: boolean | null;
  responseRules: string | null;
  unmatchedPan: UnmatchedPanAction | null;
  recordBodies: boolean | null;
  recordBodiesRetentionDays: number | null;
}

/**
 * Every read and write of vault_forward_configs: TypeORM for the routes, prepared statements (Sql) for the
 * enabled configs the forwarding hot path reads.
 */
@Injectable()
export class VaultForwardConfigsRepository {
  private readonly keyset: KeysetTable<VaultForwardConfig>;

  constructor(
    @InjectRepository(VaultForwardConfig) private readonly configs: Repository<VaultForwardConfig>,
    private readonly sql: Sql,
  ) {
    this.keyset = new KeysetTable(sql, configs.metadata, 'c');
  }

  /** The enabled configs of several merchant accounts, in one statement. */
  enabledOfMany(merchantAccountIds: string[]): Promise<EnabledConfigRow[]> {
    return this.sql.prepared<EnabledConfigRow & Record<string, unknown>>(
      'forwarding.enabled-configs-many',
      `SELECT ${ENABLED_COLUMNS} FROM vault_forward_configs
          WHERE merchant_account_id = ANY($1::text[]) AND enabled ORDER BY created_at, id`,
      [merchantAccountIds],
    );
  }

  enabledOf(merchantAccountId: string): Promise<EnabledConfigRow[]> {
    return this.sql.prepared<EnabledConfigRow & Record<string, unknown>>(
      'forwarding.enabled-configs',
      `SELECT ${ENABLED_COLUMNS} FROM vault_forward_configs
        WHERE merchant_account_id = $1 AND enabled ORDER BY created_at, id`,
      [merchantAccountId],
    );
  }

  async insert(config: NewConfig): Promise<void> {
    await this.configs.insert(config);
  }

  countByDefinition(definitionId: string): Promise<number> {
    return this.configs.countBy({ definitionId });
  }

  async setDefinitionHosts(definitionId: string, hosts: string[]): Promise<void> {
    await this.configs.update({ definitionId }, { hosts });
  }

  find(merchantAccountId: string, id: string): Promise<VaultForwardConfig | null> {
    return this.configs.findOneBy({ id, merchantAccountId });
  }

  /** Whether the config was there. */
  async update(merchantAccountId: string, id: string, changes: ConfigUpdate): Promise<boolean> {
    const [, affected] = await this.configs.query<[unknown, number]>(
      `UPDATE vault_forward_configs
          SET display_name = COALESCE($3, display_name), hosts = COALESCE($4, hosts),
              methods = COALESCE($5, methods), enabled = COALESCE($6, enabled),
              response_rules = COALESCE($7::jsonb, response_rules), unmatched_pan = COALESCE($8, unmatched_pan),
              record_bodies = COALESCE($9, record_bodies),
              record_bodies_retention_days = COALESCE($10, record_bodies_retention_days), updated_at = now()
        WHERE id = $1 AND merchant_account_id = $2`,
      [
        id,
        merchantAccountId,
        changes.displayName,
        changes.hosts,
        changes.methods,
        changes.enabled,
        changes.responseRules,
        changes.unmatchedPan,
        changes.recordBodies,
        changes.recordBodiesRetentionDays,
      ],
    );
    return affected > 0;
  }

  /** Whether the config was there. */
  async delete(merchantAccountId: string, id: string): Promise<boolean> {
    const result = await this.configs.delete({ id, merchantAccountId });
    return !!result.affected;
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  page(merchantAccountId: string, keyset: KeysetRequest): Promise<VaultForwardConfig[]> {
    return this.keyset.seekPage([where('c.merchant_account_id = ?', merchantAccountId)], keyset);
  }
}
