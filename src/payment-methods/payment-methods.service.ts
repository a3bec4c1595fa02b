import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Page } from '../common/pagination/page';
import { PaginationService } from '../common/pagination/pagination.service';
import { CommonErrors } from '../common/problem/common.errors';
import { ProblemException } from '../common/problem/problem';
import { normaliseCardNumber, schemeOf } from '../vault/card';
import { CardVault } from '../vault/card-vault.service';
import { PaymentMethodResolver } from '../vault/payment-method-resolver.service';
import { CreatePaymentMethodDto, ListPaymentMethodsQuery, PaymentMethodResponse } from './dto/payment-method.dto';
import { PaymentMethod } from './payment-method.entity';
import { PaymentMethodErrors } from './payment-methods.errors';
import { isUuid } from '../common/uuid';
import { CheckoutSessionCards } from '../checkout-sessions/checkout-session-cards';
import { CheckoutSessionErrors } from '../checkout-sessions/checkout-sessions.errors';


@Injectable()
export class PaymentMethodsService {
  constructor(
    @InjectRepository(PaymentMethod) private readonly paymentMethods: Repository<PaymentMethod>,
    private readonly vault: CardVault,
    private readonly pagination: PaginationService,
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
    if (input.buyer_id !== undefined) await this.assertBuyer(merchantAccountId, input.buyer_id);
    const id = randomUUID();
    const sealed = this.vault.seal(merchantAccountId, id, { number, cardholderName: input.cardholder_name ?? null });
    await this.paymentMethods.insert({
      id,
      merchantAccountId,
      buyerId: input.buyer_id?.toLowerCase() ?? null,
      method: 'card',
      scheme: schemeOf(number),
      label: number.slice(-4),
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
        throw new ProblemException(CommonErrors.validationFailed, `${field} is not allowed with method checkout-session.`, [
          { location: 'body', name: field, message: 'not allowed with method checkout-session' },
        ]);
      }
    }
    const sessionId = input.id!.toLowerCase();
    const card = await this.sessionCards.load(merchantAccountId, sessionId, { number: true }, { location: 'body', name: 'id' }, CheckoutSessionErrors.notFound);
    if (card.source === 'id') {
      throw new ProblemException(CheckoutSessionErrors.cardIsStored, `The card of checkout session ${sessionId} is payment method ${card.paymentMethodId}.`, [
        { location: 'body', name: 'id', message: 'its card is a stored payment method already' },
      ]);
    }
    const stored = Object.assign(new CreatePaymentMethodDto(), { ...input, method: 'card', id: undefined, number: card.number!, expiration_date: card.expirationDate });
    return this.create(merchantAccountId, stored);
  }

  async get(merchantAccountId: string, id: string): Promise<PaymentMethod> {
    const found = isUuid(id) ? await this.paymentMethods.findOneBy({ id, merchantAccountId }) : null;
    if (!found) throw notFound(id);
    return found;
  }

  /** Deletes the row itself, ciphertext and wrapped data key with it: nothing is kept or flagged. */
  async delete(merchantAccountId: string, id: string): Promise<void> {
    const result = isUuid(id) ? await this.paymentMethods.delete({ id, merchantAccountId }) : { affected: 0 };
    if (!result.affected) throw notFound(id);
    // Before answering, so a forward sent after this response cannot use the card (docs/decisions.md).
    await this.resolver.forget(merchantAccountId, id);
  }

  list(merchantAccountId: string, query: ListPaymentMethodsQuery): Promise<Page<PaymentMethodResponse>> {
    const builder = this.paymentMethods.createQueryBuilder('pm').where('pm.merchant_account_id = :merchantAccountId', { merchantAccountId });
    if (query.buyer_id !== undefined) builder.andWhere('pm.buyer_id = :buyerId', { buyerId: query.buyer_id });
    return this.pagination.paginate({
      query: builder,
      alias: 'pm',
      request: query,
      limits: ListPaymentMethodsQuery.limits,
      scope: { endpoint: 'payment-methods', merchantAccountId, filters: { buyer_id: query.buyer_id?.toLowerCase() } },
      map: PaymentMethodResponse.from,
    });
  }

  private async assertBuyer(merchantAccountId: string, buyerId: string): Promise<void> {
    const [row] = (await this.paymentMethods.query('SELECT 1 FROM buyers WHERE id = $1 AND merchant_account_id = $2', [
      buyerId,
      merchantAccountId,
    ])) as unknown[];
    if (!row) {
      throw new ProblemException(CommonErrors.validationFailed, 'buyer_id names no buyer of this merchant account.', [
        { location: 'body', name: 'buyer_id', message: 'no buyer with this id in this merchant account' },
      ]);
    }
  }
}

function notFound(id: string): ProblemException {
  return new ProblemException(PaymentMethodErrors.notFound, `No payment method "${id.slice(0, 64)}" exists in this merchant account.`);
}
