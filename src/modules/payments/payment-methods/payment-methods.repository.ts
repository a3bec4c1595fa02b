import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository, SelectQueryBuilder } from 'typeorm';
import { Sql } from '../../../platform/database/sql';
import { Condition, KeysetRequest, KeysetTable, where } from '../../../platform/pagination/keyset';
import { Buyer } from '../buyers/buyer.entity';
import { PaymentMethod } from './payment-method.entity';

type NewPaymentMethod = Pick<
  PaymentMethod,
  | 'id'
  | 'merchantAccountId'
  | 'buyerId'
  | 'method'
  | 'scheme'
  | 'label'
  | 'bin'
  | 'expirationDate'
  | 'fingerprint'
  | 'externalIdentifier'
  | 'ciphertext'
  | 'wrappedKey'
  | 'masterKeyId'
>;

interface PaymentMethodFilters {
  buyerId?: string;
  buyerExternalIdentifier?: string;
  externalIdentifier?: string;
  /** False: a filter that matches no stored card (every stored card is `succeeded`). */
  matchesAny: boolean;
}

/** A card's buyer: of the card's merchant account too. */
const BUYER_JOIN = 'b.id = pm.buyer_id AND b.merchant_account_id = pm.merchant_account_id';

/** The statements run under a merchant's fingerprint lock, in its transaction. */
class FingerprintLocked {
  constructor(private readonly manager: EntityManager) {}

  async oldest(merchantAccountId: string, fingerprint: string): Promise<string | null> {
    const [existing] = await this.manager.query<Array<{ id: string }>>(
      `SELECT id FROM payment_methods WHERE merchant_account_id = $1 AND fingerprint = $2
          ORDER BY created_at, id LIMIT 1`,
      [merchantAccountId, fingerprint],
    );
    return existing ? existing.id : null;
  }

  /** Whether the expiry changed. */
  async updateExpiry(id: string, expirationDate: string): Promise<boolean> {
    const [, changed] = await this.manager.query<[unknown, number]>(
      `UPDATE payment_methods SET expiration_date = $2, updated_at = now()
              WHERE id = $1 AND expiration_date <> $2`,
      [id, expirationDate],
    );
    return changed > 0;
  }

  async insert(row: NewPaymentMethod): Promise<void> {
    await this.manager.insert(PaymentMethod, row);
  }
}

/** Every read and write of payment_methods but the forward's own reads (the vault's SealedCardsRepository). */
@Injectable()
export class PaymentMethodsRepository {
  private readonly keyset: KeysetTable<PaymentMethod>;

  constructor(
    @InjectRepository(PaymentMethod) private readonly paymentMethods: Repository<PaymentMethod>,
    sql: Sql,
  ) {
    this.keyset = new KeysetTable(sql, paymentMethods.metadata, 'pm', {
      property: 'buyer',
      metadata: paymentMethods.manager.connection.getMetadata(Buyer),
      alias: 'b',
      on: BUYER_JOIN,
    });
  }

  async insert(row: NewPaymentMethod): Promise<void> {
    await this.paymentMethods.insert(row);
  }

  /** `work` in a transaction holding the lock of the merchant's fingerprint: one card stored once. */
  inFingerprintLock<T>(
    merchantAccountId: string,
    fingerprint: string,
    work: (locked: FingerprintLocked) => Promise<T>,
  ): Promise<T> {
    return this.paymentMethods.manager.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 27))', [
        `${merchantAccountId}:${fingerprint}`,
      ]);
      return work(new FingerprintLocked(manager));
    });
  }

  find(merchantAccountId: string, id: string): Promise<PaymentMethod | null> {
    return this.withBuyer(merchantAccountId).andWhere('pm.id = :id', { id }).getOne();
  }

  /** Whether there was such a card. */
  async delete(merchantAccountId: string, id: string): Promise<boolean> {
    const result = await this.paymentMethods.delete({ id, merchantAccountId });
    return !!result.affected;
  }

  /** One page of the stored cards with their buyers, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  page(merchantAccountId: string, filters: PaymentMethodFilters, keyset: KeysetRequest): Promise<PaymentMethod[]> {
    const conditions: Condition[] = [where('pm.merchant_account_id = ?', merchantAccountId)];
    if (filters.buyerId !== undefined) conditions.push(where('pm.buyer_id = ?', filters.buyerId));
    // Inner in effect: a card without a buyer has no buyer identifier to match.
    if (filters.buyerExternalIdentifier !== undefined) {
      conditions.push(where('b.external_identifier = ?', filters.buyerExternalIdentifier));
    }
    if (filters.externalIdentifier !== undefined) {
      conditions.push(where('pm.external_identifier = ?', filters.externalIdentifier));
    }
    if (!filters.matchesAny) conditions.push(where('false'));
    return this.keyset.seekPage(conditions, keyset);
  }

  /** A buyer's cards, `limit` at most; by last use (desc: most recently used first, never used last) or creation. */
  ofBuyer(
    merchantAccountId: string,
    buyerId: string | null,
    order: { byLastUse: boolean; direction: 'ASC' | 'DESC' },
    limit: number,
  ): Promise<PaymentMethod[]> {
    const { direction } = order;
    const builder = this.paymentMethods
      .createQueryBuilder('pm')
      .where('pm.merchant_account_id = :merchantAccountId AND pm.buyer_id = :buyerId', { merchantAccountId, buyerId });
    if (order.byLastUse)
      builder.orderBy('pm.last_used_at', direction, direction === 'DESC' ? 'NULLS LAST' : 'NULLS FIRST');
    builder.addOrderBy('pm.created_at', direction).addOrderBy('pm.id', direction);
    return builder.limit(limit).getMany();
  }

  /** Cards as the API shows them: with their buyer. */
  private withBuyer(merchantAccountId: string): SelectQueryBuilder<PaymentMethod> {
    return this.paymentMethods
      .createQueryBuilder('pm')
      .leftJoinAndMapOne('pm.buyer', Buyer, 'b', BUYER_JOIN)
      .where('pm.merchant_account_id = :merchantAccountId', { merchantAccountId });
  }
}
