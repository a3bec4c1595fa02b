import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { BuyerErrors } from '../buyers/buyers.errors';
import { BuyersRepository } from '../buyers/buyers.repository';
import { KeysetRequest } from '../../../platform/pagination/keyset';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';
import { binOf } from '../../../platform/card-data/card-numbers';
import { normaliseCardNumber, schemeOf } from '../../vault/card';
import { CardVault } from '../../vault/card-vault.service';
import { PaymentMethodResolver } from '../../vault/payment-method-resolver.service';
import {
  BuyerPaymentMethodsResponse,
  CreatePaymentMethodDto,
  ListBuyerPaymentMethodsQuery,
  ListPaymentMethodsQuery,
  PaymentMethodSummaryResponse,
  statusFilter,
} from './dto/payment-method.dto';
import { PaymentMethod } from './payment-method.entity';
import { PaymentMethodErrors } from './payment-methods.errors';
import { PaymentMethodsRepository } from './payment-methods.repository';
import { isUuid } from '../../../platform/http/uuid';
import { CheckoutSessionCards } from '../checkout-sessions/checkout-session-cards';
import { CheckoutSessionErrors } from '../checkout-sessions/checkout-sessions.errors';

/** A buyer's cards come in one unpaginated answer (the SDK's shape); this bounds it. */
const BUYER_PAYMENT_METHODS_MAX = 100;

@Injectable()
export class PaymentMethodsService {
  constructor(
    private readonly paymentMethods: PaymentMethodsRepository,
    private readonly buyers: BuyersRepository,
    private readonly vault: CardVault,
    private readonly resolver: PaymentMethodResolver,
    private readonly sessionCards: CheckoutSessionCards,
  ) {}

  /** The DTO has validated the number (digits, length, Luhn) and the expiry already. */
  async create(merchantAccountId: string, input: CreatePaymentMethodDto): Promise<PaymentMethod> {
    if (input.method === 'checkout-session') return this.createFromSession(merchantAccountId, input);
    if (input.id !== undefined) {
      throw new ProblemException(CommonErrors.validationFailed, 'id is allowed only with method checkout-session.', [
        { location: 'body', name: 'id', message: 'only with method checkout-session' },
      ]);
    }
    const number = normaliseCardNumber(input.number)!;
    const buyerId = await this.buyerOf(merchantAccountId, input, 'body');
    const id = randomUUID();
    const sealed = this.vault.seal(merchantAccountId, id, { number, cardholderName: input.cardholder_name ?? null });
    await this.paymentMethods.insert({
      id,
      merchantAccountId,
      buyerId,
      method: 'card',
      scheme: schemeOf(number),
      label: number.slice(-4),
      bin: binOf(number),
      expirationDate: input.expiration_date,
      fingerprint: await this.vault.fingerprint(merchantAccountId, number),
      externalIdentifier: input.external_identifier ?? null,
      ciphertext: sealed.ciphertext,
      wrappedKey: sealed.wrappedKey,
      masterKeyId: sealed.masterKeyId,
    });
    return this.get(merchantAccountId, id);
  }

  /**
   * The card of a checkout session, stored as a payment method: its number and expiry, never its
   * security code (PCI DSS: no security code after authorisation, and none in storage at all).
   */
  private async createFromSession(merchantAccountId: string, input: CreatePaymentMethodDto): Promise<PaymentMethod> {
    for (const field of ['number', 'expiration_date', 'cardholder_name'] as const) {
      if (input[field] !== undefined) {
        throw new ProblemException(
          CommonErrors.validationFailed,
          `${field} is not allowed with method checkout-session.`,
          [{ location: 'body', name: field, message: 'not allowed with method checkout-session' }],
        );
      }
    }
    const sessionId = input.id!.toLowerCase();
    const card = await this.sessionCards.load(
      merchantAccountId,
      sessionId,
      { number: true },
      { location: 'body', name: 'id' },
      CheckoutSessionErrors.notFound,
    );
    if (card.source === 'id') {
      throw new ProblemException(
        CheckoutSessionErrors.cardIsStored,
        `The card of checkout session ${sessionId} is payment method ${card.paymentMethodId}.`,
        [{ location: 'body', name: 'id', message: 'its card is a stored payment method already' }],
      );
    }
    const stored = Object.assign(new CreatePaymentMethodDto(), {
      ...input,
      method: 'card',
      id: undefined,
      number: card.number!,
      expiration_date: card.expirationDate,
    });
    return this.create(merchantAccountId, stored);
  }

  /**
   * A card that came back in a downstream's answer (a `tokenize` response rule, decisions/0097), stored
   * as a buyerless payment method; the rules engine has put its values through the checks of `create`.
   * The same card again (the merchant's fingerprint) gives the oldest payment method with it, left as it
   * is: only a rule's `on_existing: update_expiry` lets the answer set its expiry (decision 0117), for a
   * target's answer is not the cardholder's word. The merchant's fingerprint lock makes two answers with
   * a new card at once store it once. Null when the card is new and the answer gives no expiry: a
   * payment method cannot be stored without one.
   */
  async storeAnswered(
    merchantAccountId: string,
    card: {
      number: string;
      expirationDate: string | null;
      cardholderName: string | null;
      onExisting: 'keep' | 'update_expiry';
    },
  ): Promise<string | null> {
    const fingerprint = await this.vault.fingerprint(merchantAccountId, card.number);
    return this.paymentMethods.inFingerprintLock(merchantAccountId, fingerprint, async (locked) => {
      const existing = await locked.oldest(merchantAccountId, fingerprint);
      if (existing !== null) {
        if (card.onExisting === 'update_expiry' && card.expirationDate !== null) {
          const changed = await locked.updateExpiry(existing, card.expirationDate);
          // Forwards read cards through the resolver's cache: a new expiry must reach them.
          if (changed) await this.resolver.forget(merchantAccountId, existing);
        }
        return existing;
      }
      if (card.expirationDate === null) return null;
      const id = randomUUID();
      const sealed = this.vault.seal(merchantAccountId, id, {
        number: card.number,
        cardholderName: card.cardholderName,
      });
      await locked.insert({
        id,
        merchantAccountId,
        buyerId: null,
        method: 'card',
        scheme: schemeOf(card.number),
        label: card.number.slice(-4),
        bin: binOf(card.number),
        expirationDate: card.expirationDate,
        fingerprint,
        externalIdentifier: null,
        ciphertext: sealed.ciphertext,
        wrappedKey: sealed.wrappedKey,
        masterKeyId: sealed.masterKeyId,
      });
      return id;
    });
  }

  async get(merchantAccountId: string, id: string): Promise<PaymentMethod> {
    const found = isUuid(id) ? await this.paymentMethods.find(merchantAccountId, id) : null;
    if (!found) throw notFound(id);
    return found;
  }

  /** Deletes the row itself, ciphertext and wrapped data key with it: nothing is kept or flagged. */
  async delete(merchantAccountId: string, id: string): Promise<void> {
    const deleted = isUuid(id) && (await this.paymentMethods.delete(merchantAccountId, id));
    if (!deleted) throw notFound(id);
    // Before answering, so a forward sent after this response cannot use the card (docs/decisions/0039).
    await this.resolver.forget(merchantAccountId, id);
  }

  /** One page of the stored cards, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  list(merchantAccountId: string, query: ListPaymentMethodsQuery, keyset: KeysetRequest): Promise<PaymentMethod[]> {
    const statuses = statusFilter(query);
    const filters = {
      buyerId: query.buyer_id,
      buyerExternalIdentifier: query.buyer_external_identifier,
      externalIdentifier: query.external_identifier,
      // Every stored card is `succeeded`: a filter without it matches nothing.
      matchesAny: statuses === undefined || statuses.includes('succeeded'),
    };
    return this.paymentMethods.page(merchantAccountId, filters, keyset);
  }

  /** `GET /buyers/payment-methods`: one buyer's cards, unpaginated as the SDK expects, at most BUYER_PAYMENT_METHODS_MAX. */
  async listForBuyer(
    merchantAccountId: string,
    query: ListBuyerPaymentMethodsQuery,
  ): Promise<BuyerPaymentMethodsResponse> {
    if ((query.buyer_id === undefined) === (query.buyer_external_identifier === undefined)) {
      const message = 'give exactly one of buyer_id and buyer_external_identifier';
      throw new ProblemException(
        CommonErrors.validationFailed,
        'Name the buyer with exactly one of buyer_id and buyer_external_identifier.',
        [
          { location: 'query', name: 'buyer_id', message },
          { location: 'query', name: 'buyer_external_identifier', message },
        ],
      );
    }
    const buyerId = await this.buyerOf(merchantAccountId, query, 'query');
    const direction = query.order_by === 'asc' ? 'ASC' : 'DESC';
    // desc: most recently used first, never used last; asc is its exact reverse.
    const order = { byLastUse: query.sort_by === 'last_used_at', direction } as const;
    const rows = await this.paymentMethods.ofBuyer(merchantAccountId, buyerId, order, BUYER_PAYMENT_METHODS_MAX);
    return { items: rows.map(PaymentMethodSummaryResponse.from) };
  }

  /**
   * The buyer named by buyer_id or buyer_external_identifier (at most one of them), or null. An unknown
   * buyer_id in a body is a 400 naming the field; an unknown buyer_external_identifier (or buyer_id in a
   * query) is 404 buyer-not-found.
   */
  private async buyerOf(
    merchantAccountId: string,
    input: { buyer_id?: string; buyer_external_identifier?: string },
    location: 'body' | 'query',
  ): Promise<string | null> {
    if (input.buyer_id !== undefined && input.buyer_external_identifier !== undefined) {
      throw new ProblemException(
        CommonErrors.validationFailed,
        'Give buyer_id or buyer_external_identifier, not both.',
        [{ location, name: 'buyer_external_identifier', message: 'must not be given together with buyer_id' }],
      );
    }
    if (input.buyer_id !== undefined) {
      if (location === 'body') await this.assertBuyer(merchantAccountId, input.buyer_id);
      else await this.buyerIdBy(merchantAccountId, 'id', input.buyer_id, location, 'buyer_id');
      return input.buyer_id.toLowerCase();
    }
    if (input.buyer_external_identifier !== undefined) {
      return this.buyerIdBy(
        merchantAccountId,
        'external_identifier',
        input.buyer_external_identifier,
        location,
        'buyer_external_identifier',
      );
    }
    return null;
  }

  private async buyerIdBy(
    merchantAccountId: string,
    column: 'id' | 'external_identifier',
    value: string,
    location: 'body' | 'query',
    field: string,
  ): Promise<string> {
    const id = await this.buyers.idBy(merchantAccountId, column, value);
    if (id === null) {
      throw new ProblemException(BuyerErrors.notFound, `No buyer with this ${field} exists in this merchant account.`, [
        { location, name: field, message: 'no buyer with this value in this merchant account' },
      ]);
    }
    return id;
  }

  private async assertBuyer(merchantAccountId: string, buyerId: string): Promise<void> {
    if (!(await this.buyers.exists(merchantAccountId, buyerId))) {
      throw new ProblemException(CommonErrors.validationFailed, 'buyer_id names no buyer of this merchant account.', [
        { location: 'body', name: 'buyer_id', message: 'no buyer with this id in this merchant account' },
      ]);
    }
  }
}

function notFound(id: string): ProblemException {
  return new ProblemException(
    PaymentMethodErrors.notFound,
    `No payment method "${id.slice(0, 64)}" exists in this merchant account.`,
  );
}
