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

/** One card number of the request, however often it appears: what it is stored with, or the payment method it is. */
interface CheckedNumber {
  expirationDate: string | null;
  cardholderName: string | null;
  /** Found by the check when no expiry goes with the number: the merchant's payment method with it. */
  existing: string | null;
}

/** A request's cards checked and nothing stored yet: InboundCards.check's answer, for edits() and store(). */
interface CheckedCards {
  cards: CheckedCard[];
  numbers: Map<string, CheckedNumber>;
}

/**
 * The cards of an inbound request stored (decision 0155): each number as a payment method of the merchant, the
 * same card again being the same one (PaymentMethodsService.storeAnswered: the merchant's fingerprint, under its
 * lock), with the expiry and holder name the route maps beside it; a security code is never stored: it goes, with
 * its card, into a checkout session of its own (an hour, used once, as every session's code) whose id takes its
 * place. All or nothing: check() decides every refusal (an expiry, name or code that is not one, a new card
 * without an expiry) before store() writes anything.
 */
@Injectable()
export class InboundCards {
  constructor(
    private readonly paymentMethods: PaymentMethodsService,
    private readonly sessions: CheckoutSessionsService,
  ) {}

  /**
   * Every slot's values checked, and each number that comes without an expiry looked up: it must be a card the
   * merchant holds (storeAnswered with no expiry stores nothing: it finds the card, or answers null). Writes
   * nothing; throws the 422 of the first refusal.
   */
  async check(merchantAccountId: string, slots: readonly CardSlot[]): Promise<CheckedCards> {
    const cards = slots.map((slot) => checkedCard(slot));
    const numbers = new Map<string, CheckedNumber>();
    for (const card of cards) {
      const known = numbers.get(card.slot.digits);
      if (known === undefined)
        numbers.set(card.slot.digits, {
          expirationDate: card.expirationDate,
          cardholderName: card.cardholderName,
          existing: null,
        });
      else {
        known.expirationDate ??= card.expirationDate;
        known.cardholderName ??= card.cardholderName;
      }
    }
    for (const [digits, number] of numbers) {
      if (number.expirationDate !== null) continue;
      number.existing = await this.paymentMethods.storeAnswered(merchantAccountId, {
        number: digits,
        expirationDate: null,
        cardholderName: null,
        onExisting: 'keep',
      });
      if (number.existing === null)
        throw unusable('card_number', 'is a card this merchant account does not hold, and no expiry goes with it');
    }
    return { cards, numbers };
  }

  /** The edits that put ids in place of the cards and codes: `idOf` a number's, `sessionOf` the nth code's. */
  edits(checked: CheckedCards, idOf: (digits: string) => string, sessionOf: (index: number) => string): Edit[] {
    const edits: Edit[] = [];
    let codes = 0;
    for (const { slot, securityCode } of checked.cards) {
      const id = idOf(slot.digits);
      edits.push({ start: slot.start, end: slot.end, text: slot.bare ? JSON.stringify(id) : id });
      const code = slot.fields.security_code;
      if (securityCode === null || code === undefined) continue;
      const session = sessionOf(codes++);
      edits.push({
        start: code.leaf.start,
        end: code.leaf.end,
        text: code.leaf.bare ? JSON.stringify(session) : session,
      });
    }
    return edits.sort((a, b) => a.start - b.start);
  }

  /**
   * The checked cards stored: the numbers first (a newer expiry updates a card the merchant holds,
   * `update_expiry`: the caller hands the card over as its holder gave it), then a session per code. Only the
   * database failing, or the merchant deleting a card meanwhile, stops it halfway: the sessions it made are
   * deleted again; payment methods stay (the merchant's, shown to no one, the same ones a retry finds).
   */
  async store(merchantAccountId: string, checked: CheckedCards): Promise<StoredCards> {
    const ids = new Map<string, string>();
    for (const [digits, number] of checked.numbers) {
      const id =
        number.existing ??
        (await this.paymentMethods.storeAnswered(merchantAccountId, {
          number: digits,
          expirationDate: number.expirationDate,
          cardholderName: number.cardholderName,
          onExisting: 'update_expiry',
        }));
      // Not null: a number with an expiry is stored when it is new.
      ids.set(digits, id!);
    }
    const sessions: string[] = [];
    try {
      for (const { slot, securityCode } of checked.cards) {
        if (securityCode === null || slot.fields.security_code === undefined) continue;
        const session = await this.sessions.create(
          merchantAccountId,
          Object.assign(new CheckoutSessionCreateDto(), { expires_in: MAX_EXPIRES_IN_SECONDS }),
        );
        sessions.push(session.id);
        await this.sessions.setFields(
          merchantAccountId,
          session.id,
          Object.assign(new CheckoutSessionFieldsPaymentMethodDto(), {
            method: 'id',
            id: ids.get(slot.digits)!,
            security_code: securityCode,
          }),
        );
      }
    } catch (error) {
      await Promise.allSettled(sessions.map((id) => this.sessions.delete(merchantAccountId, id)));
      throw error;
    }
    return {
      edits: this.edits(
        checked,
        (digits) => ids.get(digits)!,
        (index) => sessions[index],
      ),
      paymentMethodIds: [...ids.values()],
      checkoutSessionIds: sessions,
    };
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
