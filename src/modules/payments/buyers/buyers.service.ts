import { Injectable } from '@nestjs/common';
import { echoed } from '../../../platform/problem/echo';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ProblemException } from '../../../platform/problem/problem';
import { isUniqueViolation } from '../../../platform/problem/database-errors';
import { Buyer } from './buyer.entity';
import { BuyerErrors } from './buyers.errors';
import { isUuid } from '../../../platform/http/uuid';
import { PaymentMethodResolver } from '../../vault/payment-method-resolver.service';

const EXTERNAL_IDENTIFIER_INDEX = 'buyers_external_identifier_key';

export interface BuyerChanges {
  displayName?: string;
  /** null clears it; undefined leaves it as is. */
  externalIdentifier?: string | null;
}

/** Every method takes the merchant account first: no query runs unscoped. */
@Injectable()
export class BuyersService {
  constructor(
    @InjectRepository(Buyer) private readonly buyers: Repository<Buyer>,
    private readonly resolver: PaymentMethodResolver,
  ) {}

  async create(merchantAccountId: string, displayName: string, externalIdentifier: string | null): Promise<Buyer> {
    try {
      const result = await this.buyers.insert({ merchantAccountId, displayName, externalIdentifier });
      return await this.get(merchantAccountId, result.identifiers[0].id as string);
    } catch (error) {
      throw this.translate(error);
    }
  }

  async get(merchantAccountId: string, id: string): Promise<Buyer> {
    const buyer = isUuid(id) ? await this.buyers.findOneBy({ id, merchantAccountId }) : null;
    if (!buyer) throw notFound(id);
    return buyer;
  }

  async update(merchantAccountId: string, id: string, changes: BuyerChanges): Promise<Buyer> {
    if (!isUuid(id)) throw notFound(id);
    try {
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
      if (!affected) throw notFound(id);
    } catch (error) {
      throw this.translate(error);
    }
    return this.get(merchantAccountId, id);
  }

  /**
   * The buyer's cards go with it. They are deleted here rather than left to the foreign key's
   * cascade, because forwarding processes cache them and must be told which ones are gone.
   */
  async delete(merchantAccountId: string, id: string): Promise<void> {
    if (!isUuid(id)) throw notFound(id);
    const cards = await this.buyers.manager.transaction(async (tx) => {
      const [deletedCards] = await tx.query<[Array<{ id: string }>, number]>(
        'DELETE FROM payment_methods WHERE merchant_account_id = $1 AND buyer_id = $2 RETURNING id',
        [merchantAccountId, id],
      );
      const result = await tx.delete(Buyer, { id, merchantAccountId });
      if (!result.affected) throw notFound(id);
      return deletedCards;
    });
    for (const card of cards) await this.resolver.forget(merchantAccountId, card.id);
  }

  private translate(error: unknown): unknown {
    if (isUniqueViolation(error, EXTERNAL_IDENTIFIER_INDEX)) {
      return new ProblemException(
        BuyerErrors.duplicateExternalIdentifier,
        'Another buyer already has this external_identifier.',
        [
          {
            location: 'body',
            name: 'external_identifier',
            message: 'already used by another buyer of this merchant account',
          },
        ],
      );
    }
    return error;
  }
}

function notFound(id: string): ProblemException {
  return new ProblemException(BuyerErrors.notFound, `No buyer "${echoed(id)}" exists in this merchant account.`);
}
