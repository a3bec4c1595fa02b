import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { Condition, KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import { ApiKey, ApiKeyAlgorithm } from './api-key.entity';

interface NewApiKey {
  id: string;
  merchantAccountId: string | null;
  algorithm: ApiKeyAlgorithm;
  publicKey: ApiKey['publicKey'];
}

/** Every read and write of api_keys. */
@Injectable()
export class ApiKeysRepository {
  private readonly keyset: KeysetTable<ApiKey>;

  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    sql: Sql,
  ) {
    this.keyset = new KeysetTable(sql, keys.metadata, 'k');
  }

  async insert(key: NewApiKey): Promise<void> {
    await this.keys.insert(key);
  }

  async delete(id: string): Promise<void> {
    await this.keys.delete({ id });
  }

  findActive(id: string): Promise<ApiKey | null> {
    return this.keys.findOne({ where: { id, revokedAt: IsNull() } });
  }

  /**
   * One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows): `owner` a merchant account whose keys
   * alone are visible (null: every key), `merchantAccountId` the caller's filter.
   */
  page(owner: string | null, merchantAccountId: string | undefined, keyset: KeysetRequest): Promise<ApiKey[]> {
    const conditions: Condition[] = [];
    if (owner !== null) conditions.push(where('k.merchant_account_id = ?', owner));
    if (merchantAccountId !== undefined) conditions.push(where('k.merchant_account_id = ?', merchantAccountId));
    return this.keyset.seekPage(conditions, keyset);
  }

  /** Whether an active key with that id, visible to `owner` (null: every key), was there to revoke. */
  async revoke(id: string, owner: string | null): Promise<boolean> {
    const [rows] = await this.keys.query<[Array<{ id: string }>, number]>(
      `UPDATE api_keys SET revoked_at = now()
        WHERE id = $1 AND revoked_at IS NULL AND ($2::text IS NULL OR merchant_account_id = $2)
        RETURNING id`,
      [id, owner],
    );
    return rows.length > 0;
  }

  get(id: string): Promise<ApiKey> {
    return this.keys.findOneByOrFail({ id });
  }
}
