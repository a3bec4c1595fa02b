import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

interface MerchantKeyRow {
  wrapped_key: Buffer;
  master_key_id: string;
}

/** Every read and write of vault_merchant_keys (each merchant account's wrapped fingerprint key). */
@Injectable()
export class MerchantKeysRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** First writer wins: a key already there stays. */
  async insertIfAbsent(merchantAccountId: string, wrappedKey: Buffer, masterKeyId: string): Promise<void> {
    await this.db.query(
      `INSERT INTO vault_merchant_keys (merchant_account_id, wrapped_key, master_key_id) VALUES ($1, $2, $3)
       ON CONFLICT (merchant_account_id) DO NOTHING`,
      [merchantAccountId, wrappedKey, masterKeyId],
    );
  }

  async get(merchantAccountId: string): Promise<MerchantKeyRow> {
    const [row] = await this.db.query<MerchantKeyRow[]>(
      'SELECT wrapped_key, master_key_id FROM vault_merchant_keys WHERE merchant_account_id = $1',
      [merchantAccountId],
    );
    return row;
  }
}
