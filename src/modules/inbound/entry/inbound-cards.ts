import { Injectable } from '@nestjs/common';
import type { Edit } from '../../../platform/card-data/authentication-data-names';
import { cardScheme, securityCodeLengthOf } from '../../../platform/card-data/card-schemes';
import { ProblemException } from '../../../platform/problem/problem';
import { normaliseExpiry } from '../../forwarding/answers/response-rules-engine';
import { CheckoutSessionsService } from '../../payments/checkout-sessions/checkout-sessions.service';
import {
  CheckoutSessionCreateDto,
  CheckoutSessionFieldsPaymentMethodDto,
  MAX_EXPIRES_IN_SECONDS,
} from '../../payments/checkout-sessions/dto/checkout-session.dto';
import { PaymentMethodsService } from '../../payments/payment-methods/payment-methods.service';
import { cardholderNameProblem, expirationDateProblem } from '../../vault/card';
import { CardSlot, FieldRefused } from '../bodies/card-slots';
import { InboundErrors } from './inbound.errors';

/** What a request's cards became: the edits that put the ids in place, and the ids. */
export interface StoredCards {
  edits: Edit[];
  paymentMethodIds: string[];
  checkoutSessionIds: string[];
}

interface CheckedCard {
  slot: CardSlot;
  expirationDate: string | null;
  cardholderName: string | null;
  securityCode: string | null;
}

/**
 * The cards of an inbound request stored (decision 0155): each number as a payment method of the merchant, the
 * same card again being the same one (PaymentMethodsService.storeAnswered: the merchant's fingerprint, under its
 * lock), with the expiry and holder name the route maps beside it; a security code is never stored: it goes, with
 * its card, into a checkout session of its own (an hour, used once, as every session's code) whose id takes its
 * place. Every expiry, name and code is checked before the first card is stored, so such a refusal stores nothing;
 * a new card without an expiry is known only once the cards before it are stored (they stay: the merchant's, shown
 * to no one).
 */
@Injectable()
export class InboundCards {
  constructor(
    private readonly paymentMethods: PaymentMethodsService,
    private readonly sessions: CheckoutSessionsService,
  ) {}

  async store(merchantAccountId: string, slots: readonly CardSlot[]): Promise<StoredCards> {
    const checked = slots.map((slot) => checkedCard(slot));
    const stored = new Map<string, string>();
    const out: StoredCards = { edits: [], paymentMethodIds: [], checkoutSessionIds: [] };
    for (const card of checked) {
      const { slot } = card;
      let id = stored.get(slot.digits);
      if (id === undefined) {
        const found = await this.paymentMethods.storeAnswered(merchantAccountId, {
          number: slot.digits,
          expirationDate: card.expirationDate,
          cardholderName: card.cardholderName,
          // The caller hands over the card as its holder gave it: a newer expiry is the card's.
          onExisting: 'update_expiry',
        });
        if (found === null)
          throw unusable('card_number', 'is a card this merchant account does not hold, and no expiry goes with it');
        id = found;
        stored.set(slot.digits, id);
        out.paymentMethodIds.push(id);
      }
      out.edits.push({ start: slot.start, end: slot.end, text: slot.bare ? JSON.stringify(id) : id });
      const code = slot.fields.security_code;
      if (card.securityCode !== null && code !== undefined) {
        const session = await this.sessions.create(
          merchantAccountId,
          Object.assign(new CheckoutSessionCreateDto(), { expires_in: MAX_EXPIRES_IN_SECONDS }),
        );
        await this.sessions.setFields(
          merchantAccountId,
          session.id,
          Object.assign(new CheckoutSessionFieldsPaymentMethodDto(), {
            method: 'id',
            id,
            security_code: card.securityCode,
          }),
        );
        out.checkoutSessionIds.push(session.id);
        out.edits.push({
          start: code.leaf.start,
          end: code.leaf.end,
          text: code.leaf.bare ? JSON.stringify(session.id) : session.id,
        });
      }
    }
    out.edits.sort((a, b) => a.start - b.start);
    return out;
  }
}

/** The slot's values as they are stored, or a 422 naming the field that cannot be. */
function checkedCard(slot: CardSlot): CheckedCard {
  const { fields } = slot;
  let expirationDate: string | null = null;
  if (fields.expiration_date !== undefined) {
    expirationDate = normaliseExpiry(fields.expiration_date.leaf.value);
    if (expirationDate === null)
      throw new FieldRefused(fields.expiration_date.name, 'is not an expiry (MM/YY, MM/YYYY or YYYY-MM)');
  } else if (fields.expiration_month !== undefined || fields.expiration_year !== undefined) {
    expirationDate = splitExpiry(slot);
  }
  if (expirationDate !== null && expirationDateProblem(expirationDate) !== null)
    throw new FieldRefused(fields.expiration_date?.name ?? 'expiration_date', 'is not an expiry');
  let cardholderName: string | null = null;
  if (fields.cardholder_name !== undefined) {
    cardholderName = fields.cardholder_name.leaf.value.trim();
    const problem = cardholderNameProblem(cardholderName);
    if (problem !== null) throw new FieldRefused(fields.cardholder_name.name, problem);
  }
  let securityCode: string | null = null;
  if (fields.security_code !== undefined) {
    securityCode = fields.security_code.leaf.value.trim();
    const length = securityCodeLengthOf(cardScheme(slot.digits));
    if (!new RegExp(`^\\d{${length}}$`).test(securityCode))
      throw new FieldRefused(fields.security_code.name, `must be ${length} digits for this card`);
  }
  return { slot, expirationDate, cardholderName, securityCode };
}

/** MM/YY from a month (1–12, one or two digits) and a year (two or four digits) mapped apart. */
function splitExpiry(slot: CardSlot): string {
  const month = slot.fields.expiration_month;
  const year = slot.fields.expiration_year;
  if (month === undefined || year === undefined)
    throw new FieldRefused((month ?? year)!.name, 'is half an expiry: map expiration_month and expiration_year both');
  const m = /^\d{1,2}$/.exec(month.leaf.value.trim()) ? Number(month.leaf.value) : NaN;
  if (!(m >= 1 && m <= 12)) throw new FieldRefused(month.name, 'is not a month (1–12)');
  const y = /^(?:\d{2}|20\d{2})$/.exec(year.leaf.value.trim()) ? year.leaf.value.trim().slice(-2) : null;
  if (y === null) throw new FieldRefused(year.name, 'is not a year (YY or YYYY)');
  return `${String(m).padStart(2, '0')}/${y}`;
}

/** A refused card datum as the caller gets it: 422, naming the field, never its value. */
export function unusable(field: string, reason: string): ProblemException {
  return new ProblemException(InboundErrors.cardDataUnusable, `${field} ${reason}; nothing was sent.`, [
    { location: 'body', name: field, message: reason },
  ]);
}
