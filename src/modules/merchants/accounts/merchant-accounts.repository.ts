import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { KeysetRequest, KeysetTable } from '../../../platform/pagination/keyset';
import { MerchantAccount } from './merchant-account.entity';

/** Every read and write of merchant_accounts. */
@Injectable()
export class MerchantAccountsRepository {
  private readonly keyset: KeysetTable<MerchantAccount>;

  constructor(
    @InjectRepository(MerchantAccount) private readonly accounts: Repository<MerchantAccount>,
    sql: Sql,
  ) {
    this.keyset = new KeysetTable(sql, accounts.metadata, 'm');
  }

  async insert(id: string, displayName: string, secureFieldsOrigins: readonly string[]): Promise<void> {
    await this.accounts.query(
      'INSERT INTO merchant_accounts (id, display_name, secure_fields_origins) VALUES ($1, $2, $3::text[])',
      [id, displayName, secureFieldsOrigins],
    );
  }

  find(id: string): Promise<MerchantAccount | null> {
    return this.accounts.findOneBy({ id });
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  page(keyset: KeysetRequest): Promise<MerchantAccount[]> {
    return this.keyset.seekPage([], keyset);
  }

  /** Whether the account was there. Raw UPDATE: updated_at is set by the database clock, like created_at. */
  async update(
    id: string,
    displayName: string | null,
    secureFieldsOrigins: readonly string[] | null,
  ): Promise<boolean> {
    const [, affected] = await this.accounts.query<[unknown, number]>(
      `UPDATE merchant_accounts SET display_name = COALESCE($2, display_name),
              secure_fields_origins = COALESCE($3::text[], secure_fields_origins), updated_at = now()
        WHERE id = $1`,
      [id, displayName, secureFieldsOrigins],
    );
    return affected > 0;
  }

  /** The merchant accounts whose `secure_fields_origins` hold `origin` (the GIN index answers). */
  async listingSecureFieldsOrigin(origin: string): Promise<string[]> {
    const rows = await this.accounts.query<Array<{ id: string }>>(
      'SELECT id FROM merchant_accounts WHERE secure_fields_origins @> ARRAY[$1::text] ORDER BY id',
      [origin],
    );
    return rows.map((row) => row.id);
  }

  exists(id: string): Promise<boolean> {
    return this.accounts.exists({ where: { id } });
  }
}
