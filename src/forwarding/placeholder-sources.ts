/**
 * Where a forward's placeholder values come from: its payment methods (x-vault-forward-payment-methods)
 * or one checkout session (x-vault-forward-checkout-session), one loader each. A source tells the
 * scan what it offers (positions, whether CARD_SECURITY_CODE exists), checks at planning that it can
 * serve the request (opening nothing), and computes the values at execution. Problems name the
 * header the caller used: the vault and the sessions know no header.
 */
import { Injectable } from '@nestjs/common';
import { ProblemException } from '../common/problem/problem';
import { CheckoutSessionCards, SessionCard } from '../checkout-sessions/checkout-session-cards';
import {
  PaymentMethodResolver,
  placeholderValue,
  UnknownPaymentMethodError,
} from '../vault/payment-method-resolver.service';
import { paymentMethodsShape, PlaceholderSourceShape, PlaceholderUse } from '../vault/placeholders';
import { CHECKOUT_SESSION_HEADER, PAYMENT_METHODS_HEADER } from './forward-headers';
import { ForwardingErrors } from './forwarding.errors';

/** What a plan says about its cards: ids only. */
export interface CardReferences {
  readonly paymentMethodIds: readonly string[];
  readonly checkoutSessionId: string | null;
}

export interface PlaceholderSource {
  readonly shape: PlaceholderSourceShape;
  /** Whether the forward may disclose card data (and so is recorded durably before it is sent). */
  readonly discloses: boolean;
  /** At planning: every referenced card exists and can serve `uses`; nothing is opened. */
  check(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<void>;
  /** At execution: the value of each use, keyed by token. Values exist only in the map; never log it. */
  values(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<Map<string, string>>;
  /** After the target answered with `status`. */
  answered(merchantAccountId: string, uses: readonly PlaceholderUse[], status: number): Promise<void>;
}

const SESSION_AT = { location: 'header', name: CHECKOUT_SESSION_HEADER } as const;

function paymentMethodProblem(error: unknown): Error {
  if (!(error instanceof UnknownPaymentMethodError)) return error instanceof Error ? error : new Error(String(error));
  return new ProblemException(ForwardingErrors.unknownPaymentMethod, error.message, [
    { location: 'header', name: PAYMENT_METHODS_HEADER, message: error.message },
  ]);
}

class PaymentMethodSource implements PlaceholderSource {
  readonly shape: PlaceholderSourceShape;
  readonly discloses: boolean;

  constructor(
    private readonly resolver: PaymentMethodResolver,
    private readonly ids: readonly string[],
  ) {
    this.shape = paymentMethodsShape(ids.length, PAYMENT_METHODS_HEADER, CHECKOUT_SESSION_HEADER);
    this.discloses = ids.length > 0;
  }

  check(merchantAccountId: string): Promise<void> {
    return this.resolver
      .check(merchantAccountId, this.ids)
      .catch((error: unknown) => Promise.reject(paymentMethodProblem(error)));
  }

  values(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<Map<string, string>> {
    return this.resolver
      .resolve(merchantAccountId, this.ids, uses)
      .catch((error: unknown) => Promise.reject(paymentMethodProblem(error)));
  }

  async answered(): Promise<void> {}
}

/** Status below which an answer is taken as the target having decided (authorised or declined). */
const DECIDED_BELOW = 500;

class CheckoutSessionSource implements PlaceholderSource {
  readonly shape: PlaceholderSourceShape = {
    positions: 1,
    securityCode: true,
    listedBy: CHECKOUT_SESSION_HEADER,
    securityCodeFrom: CHECKOUT_SESSION_HEADER,
  };
  readonly discloses = true;

  constructor(
    private readonly cards: CheckoutSessionCards,
    private readonly id: string,
  ) {}

  async check(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<void> {
    // The code's presence is checked too (not opened): a forward that needs it is refused when asked for.
    await this.cards.load(
      merchantAccountId,
      this.id,
      { requireSecurityCode: usesSecurityCode(uses) },
      SESSION_AT,
      ForwardingErrors.unknownCheckoutSession,
    );
  }

  async values(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<Map<string, string>> {
    const wantsNumber = uses.some((u) => u.name === 'CARD_NUMBER' || u.name === 'CARDHOLDER_NAME');
    const card: SessionCard = await this.cards.load(
      merchantAccountId,
      this.id,
      { number: wantsNumber, securityCode: usesSecurityCode(uses) },
      SESSION_AT,
      ForwardingErrors.unknownCheckoutSession,
    );
    const values = new Map<string, string>();
    for (const use of uses) {
      if (values.has(use.token)) continue;
      values.set(
        use.token,
        placeholderValue(
          use.name,
          card.expirationDate,
          () => ({ number: card.number!, cardholderName: card.cardholderName ?? null }),
          () => card.securityCode!,
        ),
      );
    }
    return values;
  }

  /** PCI DSS 3.3.1: no security code after authorisation. An answer below 500 is taken as the decision. */
  async answered(merchantAccountId: string, uses: readonly PlaceholderUse[], status: number): Promise<void> {
    if (status < DECIDED_BELOW && usesSecurityCode(uses))
      await this.cards.eraseSecurityCode(merchantAccountId, this.id);
  }
}

function usesSecurityCode(uses: readonly PlaceholderUse[]): boolean {
  return uses.some((u) => u.name === 'CARD_SECURITY_CODE');
}

@Injectable()
export class PlaceholderSources {
  constructor(
    private readonly resolver: PaymentMethodResolver,
    private readonly sessions: CheckoutSessionCards,
  ) {}

  for(refs: CardReferences): PlaceholderSource {
    return refs.checkoutSessionId !== null
      ? new CheckoutSessionSource(this.sessions, refs.checkoutSessionId)
      : new PaymentMethodSource(this.resolver, refs.paymentMethodIds);
  }
}
