import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';
import { isUuid } from '../../../platform/http/uuid';
import { normaliseCardNumber, schemeOf } from '../../vault/card';
import { CardVault } from '../../vault/card-vault.service';
import { SecretSealer } from '../../vault/secret-sealer';
import { CheckoutSession } from './checkout-session.entity';
import {
  CARD_PART,
  CheckoutSessionCards,
  checkoutSessionAad,
  SECURITY_CODE_PART,
  THREE_D_SECURE_PART,
} from './checkout-session-cards';
import { CheckoutSessionErrors } from './checkout-sessions.errors';
import { CheckoutSessionsRepository } from './checkout-sessions.repository';
import {
  CheckoutSessionCreateDto,
  CheckoutSessionFieldsPaymentMethodDto,
  MAX_EXPIRES_IN_SECONDS,
} from './dto/checkout-session.dto';
import { CheckoutSessionThreeDSecureDto, THREE_D_SECURE_FIELDS, ThreeDSecureValues } from './dto/three-d-secure.dto';
import { SecureFieldsOrigins } from '../../merchants/accounts/secure-fields-origins';

/** Submissions from the Secure Fields a session takes, successful or not (decision 0140); the next are 429. */
const MAX_SECURE_FIELDS_TRIES = 10;

/**
 * Checkout sessions: create, read, update, delete, and collecting a card into one. Expiry is judged
 * by PostgreSQL's clock (`now()`), the same for every process; an expired session answers 410 and is
 * erased on that read if the purge has not reached it yet.
 */
@Injectable()
export class CheckoutSessionsService {
  constructor(
    private readonly sessions: CheckoutSessionsRepository,
    private readonly cards: CheckoutSessionCards,
    private readonly sealer: SecretSealer,
    private readonly vault: CardVault,
    private readonly secureFieldsOrigins: SecureFieldsOrigins,
  ) {}

  async create(merchantAccountId: string, input: CheckoutSessionCreateDto): Promise<CheckoutSession> {
    const id = randomUUID();
    await this.sessions.insert(
      id,
      merchantAccountId,
      input.metadata ?? null,
      input.expires_in ?? MAX_EXPIRES_IN_SECONDS,
    );
    return this.get(merchantAccountId, id);
  }

  /** 404 unknown (or another merchant's), 410 expired. */
  async get(merchantAccountId: string, id: string): Promise<CheckoutSession> {
    if (!isUuid(id)) throw notFound(id);
    // Expiry by the database's clock, in the same read.
    const read = await this.sessions.find(merchantAccountId, id);
    if (!read) throw notFound(id);
    const found = read.session;
    if (read.expired || found.erasedAt !== null) {
      if (found.erasedAt === null) await this.cards.erase(merchantAccountId, id);
      throw expired_(id);
    }
    return found;
  }

  /**
   * Only what is sent changes: `metadata` (null clears it) and `expires_in`, counted from now but
   * never past an hour after creation, so no update keeps a security code longer than that.
   */
  async update(merchantAccountId: string, id: string, input: CheckoutSessionCreateDto): Promise<CheckoutSession> {
    await this.get(merchantAccountId, id);
    const change = {
      setMetadata: input.metadata !== undefined,
      metadata: input.metadata ?? null,
      expiresInSeconds: input.expires_in ?? null,
    };
    if (!(await this.sessions.update(merchantAccountId, id, change, MAX_EXPIRES_IN_SECONDS))) throw expired_(id);
    return this.get(merchantAccountId, id);
  }

  /** The row goes, secrets with it; an expired session can be deleted too. */
  async delete(merchantAccountId: string, id: string): Promise<void> {
    const deleted = isUuid(id) && (await this.sessions.delete(merchantAccountId, id));
    if (!deleted) throw notFound(id);
  }

  /**
   * Collects a card (or names a stored one) and its security code. Both are sealed under one data key
   * as separate parts, so the code can be erased alone. A second call replaces the first card.
   */
  async setFields(
    merchantAccountId: string,
    id: string,
    input: CheckoutSessionFieldsPaymentMethodDto,
  ): Promise<CheckoutSession> {
    await this.get(merchantAccountId, id);
    const card = await this.cardOf(merchantAccountId, input);
    const wantDigits = card.scheme === 'amex' ? 4 : 3;
    if (input.security_code.length !== wantDigits) {
      throw fieldProblem('payment_method.security_code', `must be ${wantDigits} digits for a ${card.scheme} card`);
    }
    const number = card.number ? Buffer.from(card.number, 'utf8') : null;
    const code = Buffer.from(input.security_code, 'utf8');
    const sealed = this.sealer.sealParts(checkoutSessionAad(merchantAccountId, id), {
      [CARD_PART]: number,
      [SECURITY_CODE_PART]: code,
    });
    number?.fill(0);
    code.fill(0);
    const collected = await this.sessions.setCard(merchantAccountId, id, {
      source: input.method,
      paymentMethodId: card.paymentMethodId,
      fingerprint: card.fingerprint,
      scheme: card.scheme,
      label: card.label,
      expirationDate: card.expirationDate,
      number: sealed.parts[CARD_PART],
      securityCode: sealed.parts[SECURITY_CODE_PART],
      sealed,
    });
    if (!collected) throw expired_(id);
    return this.get(merchantAccountId, id);
  }

  /**
   * A submission from the Secure Fields, without a merchant token (decision 0140): counted on the session first,
   * whatever follows, in one statement (every API process shares the count). Then 404 unknown, 410 expired, 429
   * past MAX_SECURE_FIELDS_TRIES, 403 when the session's merchant does not list `parentOrigin` (null: none or not an
   * origin). Answers the session's merchant account, for `setFields` to collect the card into.
   */
  async admitSecureFieldsTry(id: string, parentOrigin: string | null): Promise<string> {
    if (!isUuid(id)) throw notFound(id);
    const counted = await this.sessions.countSecureFieldsTry(id.toLowerCase());
    if (!counted) throw notFound(id);
    const merchant = counted.merchant_account_id;
    await this.get(merchant, id); // 410, erasing what an expired session still holds
    if (counted.tries > MAX_SECURE_FIELDS_TRIES)
      throw new ProblemException(
        CheckoutSessionErrors.secureFieldsTriesExhausted,
        `Checkout session ${id} has had its ${MAX_SECURE_FIELDS_TRIES} Secure Fields submissions; create a new one.`,
      );
    if (parentOrigin === null || !(await this.secureFieldsOrigins.lists(merchant, parentOrigin)))
      throw new ProblemException(
        CheckoutSessionErrors.secureFieldsOriginRefused,
        'The page embedding the Secure Fields is not an origin this checkout session’s merchant account allows.',
      );
    return merchant;
  }

  /**
   * The 3-D Secure outcome for the session's card (decision 0101): sealed as one more part of the
   * envelope the card is in, so it is erased with the session and rotated with it. It belongs to that
   * card: collecting another card (setFields) drops it. 409 checkout-session-has-no-card before a card.
   */
  async setThreeDSecure(
    merchantAccountId: string,
    id: string,
    input: CheckoutSessionThreeDSecureDto,
  ): Promise<CheckoutSession> {
    await this.get(merchantAccountId, id);
    const values: ThreeDSecureValues = {};
    for (const field of Object.values(THREE_D_SECURE_FIELDS))
      if (input[field] !== undefined) values[field] = input[field];
    const aad = checkoutSessionAad(merchantAccountId, id);
    // The envelope read and written back in one statement's condition: a card collected (new data key) or a
    // key rotation (new wrapping) in between leaves no row to update, and the read is tried once more.
    for (let attempt = 0; attempt < 2; attempt++) {
      const row = await this.sessions.envelope(merchantAccountId, id);
      if (!row?.wrapped_key || !row.master_key_id)
        throw new ProblemException(
          CheckoutSessionErrors.noCard,
          `Checkout session ${id} holds no card; collect one (PUT /checkout/sessions/${id}/fields) before its 3-D Secure values.`,
        );
      const plaintext = Buffer.from(JSON.stringify(values), 'utf8');
      const ciphertext = this.sealer.sealPart(
        aad,
        { wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id },
        THREE_D_SECURE_PART,
        plaintext,
        `checkout session ${id}`,
      );
      plaintext.fill(0);
      if (await this.sessions.setThreeDSecure(merchantAccountId, id, row.wrapped_key, ciphertext))
        return this.get(merchantAccountId, id);
      await this.get(merchantAccountId, id); // expired or deleted meanwhile: 410 or 404
    }
    throw new ProblemException(
      CommonErrors.conflict,
      `Checkout session ${id} changed while its 3-D Secure values were stored; retry.`,
    );
  }

  private async cardOf(
    merchantAccountId: string,
    input: CheckoutSessionFieldsPaymentMethodDto,
  ): Promise<{
    number: string | null;
    paymentMethodId: string | null;
    scheme: string;
    label: string;
    expirationDate: string;
    /** What the disclosure budgets count the card by, whatever carries it (decision 0142). */
    fingerprint: string;
  }> {
    if (input.method === 'card') {
      if (input.id !== undefined) throw fieldProblem('payment_method.id', 'only with method id');
      const number = normaliseCardNumber(input.number!)!;
      return {
        number,
        paymentMethodId: null,
        scheme: schemeOf(number),
        label: number.slice(-4),
        expirationDate: input.expiration_date!,
        fingerprint: await this.vault.fingerprint(merchantAccountId, number),
      };
    }
    if (input.number !== undefined) throw fieldProblem('payment_method.number', 'only with method card');
    if (input.expiration_date !== undefined)
      throw fieldProblem('payment_method.expiration_date', 'only with method card');
    const pm = await this.sessions.storedCard(merchantAccountId, input.id!.toLowerCase());
    if (!pm) throw fieldProblem('payment_method.id', 'no payment method with this id in this merchant account');
    return {
      number: null,
      paymentMethodId: pm.id,
      scheme: pm.scheme,
      label: pm.label,
      expirationDate: pm.expiration_date,
      fingerprint: pm.fingerprint,
    };
  }
}

function notFound(id: string): ProblemException {
  return new ProblemException(
    CheckoutSessionErrors.notFound,
    `No checkout session "${id.slice(0, 64)}" exists in this merchant account.`,
  );
}

function expired_(id: string): ProblemException {
  return new ProblemException(
    CheckoutSessionErrors.expired,
    `Checkout session ${id} has expired; its card data is erased.`,
  );
}

function fieldProblem(name: string, message: string): ProblemException {
  return new ProblemException(CommonErrors.validationFailed, `${name} ${message}.`, [
    { location: 'body', name, message },
  ]);
}
