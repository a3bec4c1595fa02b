import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { Condition, KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import { Buyer } from './buyer.entity';

interface BuyerFilters {
  /** Case-insensitive substring of display_name or external_identifier. */
  search?: string;
  /** Exact external_identifier. */
  external_identifier?: string;
}

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export interface BuyerChanges {
  displayName?: string;
  /** null clears it; undefined leaves it as is. */
  externalIdentifier?: string | null;
}

/** Every read and write of buyers. */
@Injectable()
export class BuyersRepository {
  private readonly keyset: KeysetTable<Buyer>;

  constructor(
    @InjectRepository(Buyer) private readonly buyers: Repository<Buyer>,
    sql: Sql,
  ) {
    this.keyset = new KeysetTable(sql, buyers.metadata, 'b');
  }

  async insert(merchantAccountId: string, displayName: string, externalIdentifier: string | null): Promise<string> {
    const result = await this.buyers.insert({ merchantAccountId, displayName, externalIdentifier });
    return result.identifiers[0].id as string;
  }

  find(merchantAccountId: string, id: string): Promise<Buyer | null> {
    return this.buyers.findOneBy({ id, merchantAccountId });
  }

  /** Whether the buyer was there. */
  async update(merchantAccountId: string, id: string, changes: BuyerChanges): Promise<boolean> {
    const [, affected] = await this.buyers.query<[unknown, number]>(
      `UPDATE buyers
            SET display_name = CASE WHEN $3 THEN $4 ELSE display_name END,
                external_identifier = CASE WHEN $5 THEN $6 ELSE external_identifier END,
                updated_at = now()
          WHERE id = $1 AND merchant_account_id = $2`,
      [
        id,
        merchantAccountId,
        changes.displayName !== undefined,
        changes.displayName ?? null,
        changes.externalIdentifier !== undefined,
        changes.externalIdentifier ?? null,
      ],
    );
    return affected > 0;
  }

  /**
   * The buyer and its cards in one transaction, the ids of the cards returned (null when there was no such
   * buyer, and nothing deleted). The cards are deleted here rather than left to the foreign key's cascade,
   * because forwarding processes cache them and must be told which ones are gone; the one write of
   * payment_methods outside its repository, as the payment methods sit above the buyers.
   */
  delete(merchantAccountId: string, id: string): Promise<Array<{ id: string }> | null> {
    return this.buyers.manager
      .transaction(async (tx) => {
        const [deletedCards] = await tx.query<[Array<{ id: string }>, number]>(
          'DELETE FROM payment_methods WHERE merchant_account_id = $1 AND buyer_id = $2 RETURNING id',
          [merchantAccountId, id],
        );
        const result = await tx.delete(Buyer, { id, merchantAccountId });
        if (!result.affected) throw new NoSuchBuyer();
        return deletedCards;
      })
      .catch((error: unknown) => {
        if (error instanceof NoSuchBuyer) return null;
        throw error;
      });
  }

  /** The id of the merchant account's buyer whose `column` is `value`, if any. */
  async idBy(merchantAccountId: string, column: 'id' | 'external_identifier', value: string): Promise<string | null> {
    const [row] = await this.buyers.query<Array<{ id: string }>>(
      `SELECT id FROM buyers WHERE merchant_account_id = $1 AND ${column} = $2`,
      [merchantAccountId, value],
    );
    return row ? row.id : null;
  }

  async exists(merchantAccountId: string, id: string): Promise<boolean> {
    const [row] = await this.buyers.query<unknown[]>(
      'SELECT 1 FROM buyers WHERE id = $1 AND merchant_account_id = $2',
      [id, merchantAccountId],
    );
    return row !== undefined;
  }

  /** One page of a merchant account's buyers, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  page(merchantAccountId: string, filters: BuyerFilters, keyset: KeysetRequest): Promise<Buyer[]> {
    const conditions: Condition[] = [where('b.merchant_account_id = ?', merchantAccountId)];
    if (filters.external_identifier !== undefined) {
      conditions.push(where('b.external_identifier = ?', filters.external_identifier));
    }
    if (filters.search !== undefined) {
      const search = likePattern(filters.search);
      conditions.push(where('b.display_name ILIKE ? OR b.external_identifier ILIKE ?', search, search));
    }
    return this.keyset.seekPage(conditions, keyset);
  }
}

/** Rolls the delete back when no buyer was there. */
class NoSuchBuyer extends Error {}
