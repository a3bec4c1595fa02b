/**
 * Where a forward's placeholder values come from: its payment methods (x-vault-forward-payment-methods)
 * or one checkout session (x-vault-forward-checkout-session), one loader each. A source tells the
 * scan what it offers (positions, whether CARD_SECURITY_CODE exists), checks at planning that it can
 * serve the request (opening nothing), and computes the values at execution. Problems name the
 * header the caller used: the vault and the sessions know no header.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ProblemException } from '../../../platform/problem/problem';
import {
  CheckoutSessionCards,
  SecurityCodeClaim,
  SessionCard,
} from '../../payments/checkout-sessions/checkout-session-cards';
import { THREE_D_SECURE_FIELDS } from '../../payments/checkout-sessions/dto/three-d-secure.dto';
import {
  CryptogramSupplier,
  MissingCryptogramError,
  MissingNetworkTokenError,
  PaymentMethodResolver,
  placeholderValue,
  UnknownPaymentMethodError,
} from '../../vault/payment-method-resolver.service';
import {
  isCryptogramName,
  isThreeDSecureName,
  orEmptyString,
  paymentMethodsShape,
  PlaceholderSourceShape,
  PlaceholderUse,
} from '../../vault/placeholders/placeholders';
import {
  TOKEN_REQUESTOR,
  TokenRequestor,
  TokenRequestorError,
  TokenRequestorErrors,
} from '../../payments/network-tokens/token-requestor';
import { CHECKOUT_SESSION_HEADER, CRYPTOGRAMS_HEADER, PAYMENT_METHODS_HEADER } from './forward-headers';
import { ForwardingErrors } from './forwarding.errors';

/** The names whose value is read from the card's number or name, so the session's card is opened for them. */
const OPENED = new Set<string>(['CARD_NUMBER', 'CARD_BIN', 'CARD_LAST4', 'CARDHOLDER_NAME']);

/** What a plan says about its cards: ids only. */
interface CardReferences {
  readonly paymentMethodIds: readonly string[];
  readonly checkoutSessionId: string | null;
  /** The forward's deadline: a session's security code is held for it and a margin. */
  readonly timeoutMs: number;
  /**
   * The forward's id (a plan's; a queued job's for all its attempts), which holds a session's security
   * code while it is in flight; planning, which holds nothing, has none.
   */
  readonly id?: string;
  /** x-vault-forward-cryptograms by position (synchronous forwards only; never stored). */
  readonly cryptograms?: ReadonlyArray<string | null>;
  /** x-vault-forward-merchant-initiated, passed to the token requestor. */
  readonly merchantInitiated?: boolean;
  /** What planning in this process read (a plan's local part): the cards' fingerprints. */
  readonly local?: { readonly fingerprints: readonly string[] };
}

export interface PlaceholderSource {
  readonly shape: PlaceholderSourceShape;
  /** Whether the forward may disclose card data (and so is recorded durably before it is sent). */
  readonly discloses: boolean;
  /** At planning: every referenced card exists and can serve `uses`; nothing is opened. */
  check(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<void>;
  /**
   * What the disclosure budgets count (decision 0142): the fingerprint of each card, whatever carries it (a
   * payment method, a network token of one, a checkout session's own card or the stored card it names). Opens none.
   */
  fingerprints(merchantAccountId: string): Promise<string[]>;
  /** At execution: the value of each use, keyed by token. Values exist only in the map; never log it. */
  values(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<Map<string, string>>;
  /**
   * Whether values() for `uses` only reads and opens (the vault's rows, the cards, in this process), so it may
   * run while the disclosure budgets count the forward (decision 0157). False (or absent) when it reaches out
   * or holds something: a token requestor asked for a cryptogram, a checkout session's security code held; it
   * then waits for the count, as a refused forward must not have done either.
   */
  valuesOnlyRead?(uses: readonly PlaceholderUse[]): boolean;
  /** After the target answered with `status`. */
  answered(merchantAccountId: string, uses: readonly PlaceholderUse[], status: number): Promise<void>;
  /** After `values` when no answer came (a failure before or while sending): lets go of what it holds. */
  abandoned(merchantAccountId: string): Promise<void>;
}

const SESSION_AT = { location: 'header', name: CHECKOUT_SESSION_HEADER } as const;

function paymentMethodProblem(error: unknown): Error {
  if (error instanceof MissingNetworkTokenError) {
    // Names the card (position and id) and the placeholder, never a value.
    return new ProblemException(ForwardingErrors.invalidPlaceholder, error.message, [
      { location: 'header', name: PAYMENT_METHODS_HEADER, message: error.message },
    ]);
  }
  if (error instanceof MissingCryptogramError) return cryptogramProblem(error.message);
  if (error instanceof TokenRequestorError) {
    // Ours, not the target's (x-vault-forward-error: true); nothing was sent to the target.
    const definition =
      error.kind === 'timeout' ? TokenRequestorErrors.tokenRequestorTimeout : TokenRequestorErrors.tokenRequestorFailed;
    return new ProblemException(definition, `No cryptogram for CARD_CRYPTOGRAM_X: ${error.message}; nothing was sent.`);
  }
  if (!(error instanceof UnknownPaymentMethodError)) return error instanceof Error ? error : new Error(String(error));
  return new ProblemException(ForwardingErrors.unknownPaymentMethod, error.message, [
    { location: 'header', name: PAYMENT_METHODS_HEADER, message: error.message },
  ]);
}

function cryptogramProblem(message: string): ProblemException {
  return new ProblemException(ForwardingErrors.invalidPlaceholder, message, [
    { location: 'header', name: CRYPTOGRAMS_HEADER, message },
  ]);
}

class PaymentMethodSource implements PlaceholderSource {
  readonly shape: PlaceholderSourceShape;
  readonly discloses: boolean;

  constructor(
    private readonly resolver: PaymentMethodResolver,
    private readonly ids: readonly string[],
    private readonly requestor: TokenRequestor,
    private readonly cryptograms: ReadonlyArray<string | null>,
    private readonly merchantInitiated: boolean,
  ) {
    this.shape = paymentMethodsShape(ids.length, PAYMENT_METHODS_HEADER, CHECKOUT_SESSION_HEADER);
    this.discloses = ids.length > 0;
  }

  async check(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<void> {
    await this.resolver
      .check(merchantAccountId, this.ids, uses)
      .catch((error: unknown) => Promise.reject(paymentMethodProblem(error)));
    // Every card that a plain CARD_CRYPTOGRAM_X uses has a network token (checked above); its cryptogram
    // must come from the caller or a token requestor, else it is refused now, before anything is sent.
    if (this.requestor.configured) return;
    for (const use of uses) {
      if (!isCryptogramName(use.name) || orEmptyString(use.name).orEmpty) continue;
      if (!this.cryptograms[use.position - 1])
        throw cryptogramProblem(
          `{{ ${use.token} }}: ${CRYPTOGRAMS_HEADER} has no cryptogram at position ${use.position} and no token ` +
            `requestor is configured; the _OR_EMPTY_STRING variant gives "" instead`,
        );
    }
  }

  fingerprints(merchantAccountId: string): Promise<string[]> {
    return this.resolver
      .fingerprints(merchantAccountId, this.ids)
      .catch((error: unknown) => Promise.reject(paymentMethodProblem(error)));
  }

  values(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<Map<string, string>> {
    // The caller's cryptogram for a position, else the token requestor's (asked per card and attempt).
    const supply: CryptogramSupplier = async (position, paymentMethodId, token) => {
      const given = this.cryptograms[position - 1];
      if (given) return given;
      if (!this.requestor.configured) return null;
      return this.requestor.cryptogram({
        merchantAccountId,
        paymentMethodId,
        networkTokenId: token.id,
        token: token.token(),
        expirationDate: token.expirationDate,
        merchantInitiated: this.merchantInitiated,
      });
    };
    return this.resolver
      .resolve(merchantAccountId, this.ids, uses, supply)
      .catch((error: unknown) => Promise.reject(paymentMethodProblem(error)));
  }

  valuesOnlyRead(uses: readonly PlaceholderUse[]): boolean {
    return !this.requestor.configured || !uses.some((use) => isCryptogramName(use.name));
  }

  async answered(): Promise<void> {}

  async abandoned(): Promise<void> {}
}

/** Status below which an answer is taken as the target having decided (authorised or declined). */
const DECIDED_BELOW = 500;
/**
 * How much longer than the forward's deadline its hold on a security code lasts: the fill, the methods,
 * the disclosure (up to its 2 s wait for PostgreSQL) and the erasure after the answer. Only a holder that
 * died needs the lease to lapse; a live one releases or erases.
 */
const CLAIM_MARGIN_MS = 60_000;

class CheckoutSessionSource implements PlaceholderSource {
  readonly shape: PlaceholderSourceShape = {
    positions: 1,
    securityCode: true,
    networkTokens: false,
    threeDSecure: true,
    listedBy: CHECKOUT_SESSION_HEADER,
    securityCodeFrom: CHECKOUT_SESSION_HEADER,
  };
  readonly discloses = true;

  /** This forward's hold on the security code, once values() has taken it. */
  private claim: SecurityCodeClaim | null = null;
  /** The card's fingerprint as check() read it. */
  private fingerprint: string | null | undefined;

  constructor(
    private readonly cards: CheckoutSessionCards,
    private readonly id: string,
    private readonly timeoutMs: number,
    private readonly forwardId: string | undefined,
  ) {}

  async check(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<void> {
    // The code's presence is checked too (not opened): a forward that needs it is refused when asked for.
    const card = await this.cards.load(
      merchantAccountId,
      this.id,
      { requireSecurityCode: usesSecurityCode(uses) },
      SESSION_AT,
      ForwardingErrors.unknownCheckoutSession,
    );
    this.fingerprint = card.fingerprint;
    // A plain CARD_3DS_* name needs the session's 3-D Secure values (decision 0101); its twin is "" without.
    const plain = uses.find((u) => isThreeDSecureName(u.name) && !orEmptyString(u.name).orEmpty);
    if (plain && !card.hasThreeDSecure) throw threeDSecureProblem(plain, this.id);
  }

  async fingerprints(merchantAccountId: string): Promise<string[]> {
    if (this.fingerprint === undefined) {
      const card = await this.cards.load(
        merchantAccountId,
        this.id,
        {},
        SESSION_AT,
        ForwardingErrors.unknownCheckoutSession,
      );
      this.fingerprint = card.fingerprint;
    }
    // A card collected before sessions kept its fingerprint counts as the session (which lives an hour at most).
    return [this.fingerprint ?? `checkout-session:${this.id.toLowerCase()}`];
  }

  async values(merchantAccountId: string, uses: readonly PlaceholderUse[]): Promise<Map<string, string>> {
    const wantsNumber = uses.some((u) => OPENED.has(u.name));
    // The code leaves at most once at a time: held for this forward until it is answered (or fails).
    const claim = usesSecurityCode(uses)
      ? { token: this.forwardId ?? randomUUID(), leaseMs: this.timeoutMs + CLAIM_MARGIN_MS }
      : null;
    const card: SessionCard = await this.cards.load(
      merchantAccountId,
      this.id,
      {
        number: wantsNumber,
        securityCode: claim !== null,
        claim: claim ?? undefined,
        threeDSecure: uses.some((u) => isThreeDSecureName(u.name)),
      },
      SESSION_AT,
      ForwardingErrors.unknownCheckoutSession,
    );
    // Held from here until answered() or abandoned(); a load that failed let go of its own hold.
    this.claim = claim;
    const values = new Map<string, string>();
    for (const use of uses) {
      if (values.has(use.token)) continue;
      if (isThreeDSecureName(use.name)) {
        const { base, orEmpty } = orEmptyString(use.name);
        const field = THREE_D_SECURE_FIELDS[base.slice('CARD_3DS_'.length) as keyof typeof THREE_D_SECURE_FIELDS];
        const value = card.threeDSecure?.[field];
        if (value === undefined && !orEmpty) {
          await this.abandoned(merchantAccountId);
          throw threeDSecureProblem(use, this.id);
        }
        values.set(use.token, value ?? '');
        continue;
      }
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

  valuesOnlyRead(uses: readonly PlaceholderUse[]): boolean {
    return !usesSecurityCode(uses);
  }

  /**
   * PCI DSS 3.3.1: no security code after authorisation. An answer below 500 is taken as the decision and
   * erases it; after any other the code is released for a retry.
   */
  async answered(merchantAccountId: string, uses: readonly PlaceholderUse[], status: number): Promise<void> {
    if (status < DECIDED_BELOW && usesSecurityCode(uses)) {
      this.claim = null;
      await this.cards.eraseSecurityCode(merchantAccountId, this.id);
      return;
    }
    await this.abandoned(merchantAccountId);
  }

  async abandoned(merchantAccountId: string): Promise<void> {
    const claim = this.claim;
    if (!claim) return;
    this.claim = null;
    await this.cards.releaseSecurityCode(merchantAccountId, this.id, claim.token);
  }
}

/** A plain CARD_3DS_* name the session cannot fill; names the placeholder and the session, never a value. */
function threeDSecureProblem(use: PlaceholderUse, sessionId: string): ProblemException {
  const message =
    `{{ ${use.token} }}: checkout session ${sessionId} holds no such 3-D Secure value ` +
    `(PUT /checkout/sessions/{id}/three-d-secure); the _OR_EMPTY_STRING variant gives "" instead`;
  return new ProblemException(ForwardingErrors.invalidPlaceholder, message, [{ ...SESSION_AT, message }]);
}

function usesSecurityCode(uses: readonly PlaceholderUse[]): boolean {
  return uses.some((u) => u.name === 'CARD_SECURITY_CODE');
}

@Injectable()
export class PlaceholderSources {
  constructor(
    private readonly resolver: PaymentMethodResolver,
    private readonly sessions: CheckoutSessionCards,
    @Inject(TOKEN_REQUESTOR) private readonly requestor: TokenRequestor,
  ) {}

  for(refs: CardReferences): PlaceholderSource {
    const source =
      refs.checkoutSessionId !== null
        ? new CheckoutSessionSource(this.sessions, refs.checkoutSessionId, refs.timeoutMs, refs.id)
        : new PaymentMethodSource(
            this.resolver,
            refs.paymentMethodIds,
            this.requestor,
            refs.cryptograms ?? [],
            refs.merchantInitiated ?? false,
          );
    // A plan made in this process: its cards are not read again.
    const known = refs.local?.fingerprints;
    return known ? Object.assign(source, { fingerprints: () => Promise.resolve([...known]) }) : source;
  }
}
