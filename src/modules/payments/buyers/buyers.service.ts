import { Injectable } from '@nestjs/common';
import { echoed } from '../../../platform/problem/echo';
import { ProblemException } from '../../../platform/problem/problem';
import { isUniqueViolation } from '../../../platform/problem/database-errors';
import { Buyer } from './buyer.entity';
import { BuyerErrors } from './buyers.errors';
import { BuyerChanges, BuyersRepository } from './buyers.repository';
import { isUuid } from '../../../platform/http/uuid';
import { PaymentMethodResolver } from '../../vault/payment-method-resolver.service';

const EXTERNAL_IDENTIFIER_INDEX = 'buyers_external_identifier_key';

/** Every method takes the merchant account first: no query runs unscoped. */
@Injectable()
export class BuyersService {
  constructor(
    private readonly buyers: BuyersRepository,
    private readonly resolver: PaymentMethodResolver,
  ) {}

  async create(merchantAccountId: string, displayName: string, externalIdentifier: string | null): Promise<Buyer> {
    try {
      const id = await this.buyers.insert(merchantAccountId, displayName, externalIdentifier);
      return await this.get(merchantAccountId, id);
    } catch (error) {
      throw this.translate(error);
    }
  }

  async get(merchantAccountId: string, id: string): Promise<Buyer> {
    const buyer = isUuid(id) ? await this.buyers.find(merchantAccountId, id) : null;
    if (!buyer) throw notFound(id);
    return buyer;
  }

  async update(merchantAccountId: string, id: string, changes: BuyerChanges): Promise<Buyer> {
    if (!isUuid(id)) throw notFound(id);
    try {
      if (!(await this.buyers.update(merchantAccountId, id, changes))) throw notFound(id);
    } catch (error) {
      throw this.translate(error);
    }
    return this.get(merchantAccountId, id);
  }

  /** The buyer's cards go with it, and every process is told they are gone. */
  async delete(merchantAccountId: string, id: string): Promise<void> {
    if (!isUuid(id)) throw notFound(id);
    const cards = await this.buyers.delete(merchantAccountId, id);
    if (cards === null) throw notFound(id);
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
