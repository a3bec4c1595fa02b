import { Injectable } from '@nestjs/common';
import { Sql } from '../../platform/database/sql';

export interface SealedCardRow {
  id: string;
  expiration_date: string;
  /** The merchant's keyed hash of the number (CardVault.fingerprint): the card whatever carries it. */
  fingerprint: string;
  ciphertext: Buffer;
  wrapped_key: Buffer;
  master_key_id: string;
}

interface SealedNetworkTokenRow extends Omit<SealedCardRow, 'fingerprint'> {
  payment_method_id: string;
}

/**
 * The forward's hot-path reads of payment_methods and payment_method_network_tokens, as prepared statements:
 * the vault sits below the payments context that owns those tables (and their writes), so the reads it
 * resolves placeholders from are its own, read-only.
 */
@Injectable()
export class SealedCardsRepository {
  constructor(private readonly sql: Sql) {}

  cards(merchantAccountId: string, ids: readonly string[]): Promise<SealedCardRow[]> {
    return this.sql.prepared<SealedCardRow & Record<string, unknown>>(
      'vault.resolve-payment-methods',
      `SELECT id, expiration_date, fingerprint, ciphertext, wrapped_key, master_key_id
           FROM payment_methods WHERE merchant_account_id = $1 AND id = ANY($2::uuid[])`,
      [merchantAccountId, ids],
    );
  }

  /** The newest active network token of each card. */
  networkTokens(merchantAccountId: string, cardIds: readonly string[]): Promise<SealedNetworkTokenRow[]> {
    return this.sql.prepared<SealedNetworkTokenRow & Record<string, unknown>>(
      'vault.resolve-network-tokens',
      `SELECT DISTINCT ON (payment_method_id) id, payment_method_id, expiration_date, ciphertext, wrapped_key, master_key_id
       FROM payment_method_network_tokens
       WHERE merchant_account_id = $1 AND payment_method_id = ANY($2::uuid[]) AND status = 'active'
       ORDER BY payment_method_id, created_at DESC, id`,
      [merchantAccountId, cardIds],
    );
  }
}
