import { Injectable } from '@nestjs/common';
import { ProblemDefinition, ProblemException, ProblemFieldError } from '../../../platform/problem/problem';
import { isUuid } from '../../../platform/http/uuid';
import { CardVault } from '../../vault/card-vault.service';
import { boundAad, SecretSealer } from '../../vault/secret-sealer';
import { CheckoutSessionErrors } from './checkout-sessions.errors';
import { CheckoutSessionsRepository } from './checkout-sessions.repository';
import type { ThreeDSecureValues } from './dto/three-d-secure.dto';

/** Binds a session's envelope to its merchant and id (SEALED_TABLES: checkout_sessions). */
export function checkoutSessionAad(merchantAccountId: string, id: string): string {
  return boundAad('checkout-session', merchantAccountId, id);
}

/** The part names of a session's envelope (SecretSealer.sealParts). */
export const CARD_PART = 'card-number';
export const SECURITY_CODE_PART = 'security-code';
/** 3-D Secure values as JSON (decision 0101). */
export const THREE_D_SECURE_PART = 'three-d-secure';

/** Who to name in a problem about the session (the forward header, or a body field). */
type SessionReference = Omit<ProblemFieldError, 'message'>;

export interface SessionCard {
  source: 'card' | 'id';
  paymentMethodId: string | null;
  /** The card's fingerprint, what the disclosure budgets count (decision 0142); null if collected before it was kept. */
  fingerprint: string | null;
  expirationDate: string;
  /** Present when asked for. */
  number?: string;
  cardholderName?: string | null;
  securityCode?: string;
  /** Whether the session holds 3-D Secure values (known without opening them). */
  hasThreeDSecure: boolean;
  /** Present when asked for and held. */
  threeDSecure?: ThreeDSecureValues;
}

interface SessionCardWants {
  number?: boolean;
  securityCode?: boolean;
  threeDSecure?: boolean;
  /** The code must be there, but is not opened (planning). */
  requireSecurityCode?: boolean;
  /**
   * With `securityCode`: hold the code for one forward first (`token`, for `leaseMs`), or fail with 409
   * checkout-session-in-use while another forward holds it. Release with releaseSecurityCode, or
   * eraseSecurityCode once the target has decided.
   */
  claim?: SecurityCodeClaim;
}

export interface SecurityCodeClaim {
  /** The forward's id: unique per synchronous forward, the job's id for every attempt of a queued one. */
  token: string;
  leaseMs: number;
}

/**
 * The loader of a checkout session's card: the one place that reads and opens its secrets, and
 * erases them. Rows are read from PostgreSQL on every use, never from the shared card cache: a
 * session lives minutes, and its erasure must hold in every process at once.
 */
@Injectable()
export class CheckoutSessionCards {
  constructor(
    private readonly sessions: CheckoutSessionsRepository,
    private readonly sealer: SecretSealer,
    private readonly vault: CardVault,
  ) {}

  /**
   * The session's card (values only as `wants` says), or a problem naming `at`: `missing` when the
   * session is unknown to this merchant, 410 when expired (erased now if the purge has not yet),
   * 409 without a card, 410 when the security code is wanted but was erased after use, 409 in use
   * when it is to be claimed and another forward holds it.
   */
  async load(
    merchantAccountId: string,
    id: string,
    wants: SessionCardWants,
    at: SessionReference,
    missing: ProblemDefinition,
  ): Promise<SessionCard> {
    // Claimed before the read: the conditional UPDATE is what makes two forwards, in any processes, unable
    // to both hold the code. Why a claim failed (erased, expired, unknown, held) is told by the read.
    const claim = wants.securityCode && isUuid(id) ? wants.claim : undefined;
    const claimed = claim ? await this.claimSecurityCode(merchantAccountId, id, claim) : false;
    try {
      return await this.read(merchantAccountId, id, wants, at, missing, claim !== undefined && !claimed);
    } catch (error) {
      // A hold this call took but cannot use (no card, a row that does not open) goes at once; one it did
      // not take is not its to let go, even under the same forward id.
      if (claimed) await this.releaseSecurityCode(merchantAccountId, id, claim!.token).catch(() => undefined);
      throw error;
    }
  }

  private async read(
    merchantAccountId: string,
    id: string,
    wants: SessionCardWants,
    at: SessionReference,
    missing: ProblemDefinition,
    heldElsewhere: boolean,
  ): Promise<SessionCard> {
    const row = isUuid(id) ? await this.sessions.cardRow(merchantAccountId, id) : undefined;
    const fail = (definition: ProblemDefinition, detail: string, message: string) =>
      new ProblemException(definition, detail, [{ ...at, message }]);
    if (!row)
      throw fail(
        missing,
        `No checkout session "${id.slice(0, 64)}" exists in this merchant account.`,
        'unknown checkout session',
      );
    if (row.expired || row.erased) {
      if (!row.erased) await this.erase(merchantAccountId, id);
      throw fail(
        CheckoutSessionErrors.expired,
        `Checkout session ${id} has expired; its card data is erased.`,
        'checkout session expired',
      );
    }
    const ownCard = row.card_source === 'card' && row.ciphertext !== null;
    const storedCard = row.card_source === 'id' && row.pm_ciphertext !== null;
    if (!ownCard && !storedCard)
      throw fail(CheckoutSessionErrors.noCard, `Checkout session ${id} holds no card.`, 'no card collected');
    if ((wants.securityCode || wants.requireSecurityCode) && row.security_code_ciphertext === null) {
      throw row.security_code_erased
        ? fail(
            CheckoutSessionErrors.securityCodeErased,
            `The security code of checkout session ${id} was erased after use.`,
            'security code erased after use',
          )
        : fail(
            CheckoutSessionErrors.noCard,
            `Checkout session ${id} holds no security code.`,
            'no security code collected',
          );
    }
    if (heldElsewhere) {
      throw fail(
        CheckoutSessionErrors.inUse,
        `Another forward holding the security code of checkout session ${id} is in flight; retry when it is answered.`,
        'security code in use by another forward',
      );
    }
    const card: SessionCard = {
      source: row.card_source!,
      paymentMethodId: row.payment_method_id,
      fingerprint: row.card_fingerprint,
      expirationDate: (storedCard ? row.pm_expiration_date : row.expiration_date)!,
      hasThreeDSecure: row.three_d_secure_ciphertext !== null,
    };
    const aad = checkoutSessionAad(merchantAccountId, id);
    const sealed = { wrappedKey: row.wrapped_key!, masterKeyId: row.master_key_id! };
    if (wants.number) {
      if (storedCard) {
        const secrets = this.vault.open(merchantAccountId, row.payment_method_id!, {
          ciphertext: row.pm_ciphertext!,
          wrappedKey: row.pm_wrapped_key!,
          masterKeyId: row.pm_master_key_id!,
        });
        card.number = secrets.number;
        card.cardholderName = secrets.cardholderName;
      } else {
        const plaintext = this.sealer.openPart(aad, sealed, CARD_PART, row.ciphertext!, `checkout session ${id}`);
        card.number = plaintext.toString('utf8');
        card.cardholderName = null;
        plaintext.fill(0);
      }
    }
    if (wants.securityCode) {
      const plaintext = this.sealer.openPart(
        aad,
        sealed,
        SECURITY_CODE_PART,
        row.security_code_ciphertext!,
        `checkout session ${id}`,
      );
      card.securityCode = plaintext.toString('utf8');
      plaintext.fill(0);
    }
    if (wants.threeDSecure && row.three_d_secure_ciphertext !== null) {
      const plaintext = this.sealer.openPart(
        aad,
        sealed,
        THREE_D_SECURE_PART,
        row.three_d_secure_ciphertext,
        `checkout session ${id}`,
      );
      card.threeDSecure = JSON.parse(plaintext.toString('utf8')) as ThreeDSecureValues;
      plaintext.fill(0);
    }
    return card;
  }

  /** Nulls every secret and card column of one expired session (read time; the purge does the rest). */
  async erase(merchantAccountId: string, id: string): Promise<void> {
    await this.sessions.erase(merchantAccountId, id);
  }

  /**
   * Takes the security code for one forward: true when it is free (never claimed, released, or its
   * holder's lease lapsed: a process that died mid-forward) or already this forward's (a queued job's
   * attempt after one whose worker died), and still there. One statement, so concurrent claims in any
   * number of processes have one winner.
   */
  private async claimSecurityCode(merchantAccountId: string, id: string, claim: SecurityCodeClaim): Promise<boolean> {
    return this.sessions.claimSecurityCode(merchantAccountId, id, claim.token, claim.leaseMs);
  }

  /** Frees a code the forward holding `token` did not get a decision for (a 5xx, a failure): it may go again. */
  async releaseSecurityCode(merchantAccountId: string, id: string, token: string): Promise<void> {
    await this.sessions.releaseSecurityCode(merchantAccountId, id, token);
  }

  /**
   * After a forward that used the security code was answered by its target (authorised or declined):
   * the code may not be kept (PCI DSS 3.3.1), so its ciphertext goes, with any claim on it; number and
   * expiry stay until expiry.
   */
  async eraseSecurityCode(merchantAccountId: string, id: string): Promise<void> {
    await this.sessions.eraseSecurityCode(merchantAccountId, id);
  }
}
