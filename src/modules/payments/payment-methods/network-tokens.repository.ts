import { Injectable } from '@nestjs/common';
import { Sql } from '../../../platform/database/sql';
import type { SealedRecord } from '../../vault/envelope';
import { NetworkTokenRow } from './dto/network-token.dto';

const COLUMNS = `t.id, t.payment_method_id, t.status, t.expiration_date, t.label, pm.scheme, t.created_at, t.updated_at`;

interface NewNetworkToken {
  id: string;
  merchantAccountId: string;
  paymentMethodId: string;
  status: string;
  expirationDate: string;
  label: string;
  sealed: SealedRecord;
}

/**
 * Every read and write of payment_method_network_tokens but the forward's own read (the vault's
 * SealedCardsRepository); the rows shown read their card's scheme.
 */
@Injectable()
export class NetworkTokensRepository {
  constructor(private readonly sql: Sql) {}

  async insert(token: NewNetworkToken): Promise<void> {
    await this.sql.prepared(
      'network-tokens.insert',
      `INSERT INTO payment_method_network_tokens
         (id, merchant_account_id, payment_method_id, status, expiration_date, label, ciphertext, wrapped_key, master_key_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        token.id,
        token.merchantAccountId,
        token.paymentMethodId,
        token.status,
        token.expirationDate,
        token.label,
        token.sealed.ciphertext,
        token.sealed.wrappedKey,
        token.sealed.masterKeyId,
      ],
    );
  }

  /** The card's tokens, newest first, `limit` at most. */
  ofCard(merchantAccountId: string, paymentMethodId: string, limit: number): Promise<NetworkTokenRow[]> {
    return this.sql.prepared<NetworkTokenRow & Record<string, unknown>>(
      'network-tokens.list',
      `SELECT ${COLUMNS} FROM payment_method_network_tokens t JOIN payment_methods pm ON pm.id = t.payment_method_id
       WHERE t.merchant_account_id = $1 AND t.payment_method_id = $2 ORDER BY t.created_at DESC, t.id LIMIT $3`,
      [merchantAccountId, paymentMethodId, limit],
    );
  }

  async find(merchantAccountId: string, paymentMethodId: string, id: string): Promise<NetworkTokenRow | undefined> {
    const [row] = await this.sql.prepared<NetworkTokenRow & Record<string, unknown>>(
      'network-tokens.get',
      `SELECT ${COLUMNS} FROM payment_method_network_tokens t JOIN payment_methods pm ON pm.id = t.payment_method_id
           WHERE t.merchant_account_id = $1 AND t.payment_method_id = $2 AND t.id = $3`,
      [merchantAccountId, paymentMethodId, id],
    );
    return row;
  }

  /** Whether there was such a token. */
  async delete(merchantAccountId: string, paymentMethodId: string, id: string): Promise<boolean> {
    const deleted = await this.sql.prepared(
      'network-tokens.delete',
      `DELETE FROM payment_method_network_tokens
           WHERE merchant_account_id = $1 AND payment_method_id = $2 AND id = $3 RETURNING id`,
      [merchantAccountId, paymentMethodId, id],
    );
    return deleted.length > 0;
  }
}
