import { Injectable } from '@nestjs/common';
import { SharedCache, SharedCaches } from '../../platform/redis/shared-cache';
import { parseExpirationDate } from './card';
import { CardSecrets, CardVault } from './card-vault.service';
import {
  isCryptogramName,
  isNetworkTokenName,
  isThreeDSecureName,
  orEmptyString,
  PLACEHOLDER_NAMES,
  PlaceholderName,
  PlaceholderUse,
} from './placeholders/placeholders';
import { boundAad, SecretSealer } from './secret-sealer';
import { SealedCardRow, SealedCardsRepository } from './sealed-cards.repository';

/** Binds a network token's envelope to its merchant, card and own id (docs/decisions/0085). */
export function networkTokenAad(merchantAccountId: string, paymentMethodId: string, id: string): string {
  return boundAad('network-token', merchantAccountId, paymentMethodId, id);
}

/** A placeholder needs the network token of a card that has no active one. */
export class MissingNetworkTokenError extends Error {
  constructor(
    readonly token: string,
    /** 1-based position in the list given. */
    readonly position: number,
    readonly id: string,
  ) {
    super(
      `{{ ${token} }}: the payment method at position ${position} (${id}) has no active network token; ` +
        `the _OR_EMPTY_STRING variant gives "" instead`,
    );
    this.name = 'MissingNetworkTokenError';
  }
}

/** A card's network token as the placeholders need it; the token itself is opened only when used. */
interface NetworkTokenValues {
  /** The stored token's id. */
  id: string;
  expirationDate: string;
  token: () => string;
  /** Its cryptogram for this request, when CARD_CRYPTOGRAM(_OR_EMPTY_STRING) is used and one was supplied. */
  cryptogram?: string;
}

/**
 * The cryptogram of the card at `position` (1-based) for its network token, or null when there is
 * none (neither the caller's nor a token requestor's). Its failures pass through resolve unchanged.
 */
export type CryptogramSupplier = (
  position: number,
  paymentMethodId: string,
  token: NetworkTokenValues,
) => Promise<string | null>;

/** CARD_CRYPTOGRAM_X (plain) for a card with a network token but no cryptogram to give. */
export class MissingCryptogramError extends Error {
  constructor(
    readonly token: string,
    readonly position: number,
  ) {
    super(
      `{{ ${token} }}: no cryptogram for the payment method at position ${position}; send it in ` +
        `x-vault-forward-cryptograms or configure a token requestor (the _OR_EMPTY_STRING variant gives "" instead)`,
    );
    this.name = 'MissingCryptogramError';
  }
}

/**
 * A listed payment method that is not this merchant's (unknown, deleted, another merchant's). The
 * caller names where it was listed (forwarding: its header); the vault knows no header.
 */
export class UnknownPaymentMethodError extends Error {
  constructor(
    /** 1-based position in the list given. */
    readonly position: number,
    readonly id: string,
  ) {
    super(`position ${position} (${id}) is not a payment method of this merchant account`);
    this.name = 'UnknownPaymentMethodError';
  }
}

/** Sealed rows are kept this long at most when an invalidation notice is missed. */
const SEALED_CACHE_TTL_MS = 60_000;

/**
 * Turns the payment methods a forward request names into placeholder values, with at most one query
 * for all of them. Values exist only in the returned map; callers must not log it.
 *
 * The rows are cached as they are stored — ciphertext and wrapped data key, never opened — so a
 * repeat forward costs no database round trip; opening still needs the master key every time.
 * Deleting a payment method drops its row from every process's cache (see docs/decisions/0039).
 */
@Injectable()
export class PaymentMethodResolver {
  private readonly sealed: SharedCache<SealedCardRow>;

  constructor(
    private readonly vault: CardVault,
    private readonly sealer: SecretSealer,
    private readonly rows: SealedCardsRepository,
    caches: SharedCaches,
  ) {
    this.sealed = caches.create('sealed-payment-methods', { max: 50_000, ttlMs: SEALED_CACHE_TTL_MS });
  }

  /** After a delete: no process may fill placeholders from this payment method any more. */
  forget(merchantAccountId: string, id: string): Promise<void> {
    return this.sealed.invalidate(`${merchantAccountId}:${id.toLowerCase()}`);
  }

  /** After key rotation: cached rows still carry the previous wrapping. */
  forgetAll(): Promise<void> {
    return this.sealed.invalidateAll();
  }

  private sealedRows(merchantAccountId: string, ids: readonly string[]): Promise<Map<string, SealedCardRow>> {
    return this.sealed.readThrough(
      ids,
      (id) => `${merchantAccountId}:${id}`,
      async (missing) => {
        const rows = await this.rows.cards(merchantAccountId, missing);
        return rows.map((row) => [row.id, row] as const);
      },
    );
  }

  /**
   * That every listed payment method exists for this merchant account (UnknownPaymentMethodError
   * otherwise), opening none: planning checks this, so a queued forward is refused when asked for.
   * The rows land in the cache, so the resolve that follows costs no query.
   */
  async check(merchantAccountId: string, ids: readonly string[], uses: readonly PlaceholderUse[] = []): Promise<void> {
    if (ids.length === 0) return;
    await this.present(merchantAccountId, ids);
    await this.networkTokens(merchantAccountId, ids, uses);
  }

  /**
   * The fingerprint of each listed payment method, in order (UnknownPaymentMethodError for one that is not the
   * merchant's): what the disclosure budgets count, so two stored copies of one card are one card (decision 0142).
   * From the cached rows, which planning loaded: no query on the hot path.
   */
  async fingerprints(merchantAccountId: string, ids: readonly string[]): Promise<string[]> {
    const byId = await this.present(merchantAccountId, ids);
    return ids.map((id) => byId.get(id)!.fingerprint);
  }

  /**
   * The newest active network token of each card that a network-token placeholder uses (one query;
   * not cached, as tokens change apart from cards). MissingNetworkTokenError for a plain name whose
   * card has none; an `_OR_EMPTY_STRING` one is then `""`.
   */
  private async networkTokens(
    merchantAccountId: string,
    ids: readonly string[],
    uses: readonly PlaceholderUse[],
  ): Promise<Map<number, NetworkTokenValues>> {
    const byPosition = new Map<number, NetworkTokenValues>();
    const wanted = uses.filter((use) => isNetworkTokenName(use.name));
    if (wanted.length === 0) return byPosition;
    const cards = [...new Set(wanted.map((use) => ids[use.position - 1]))];
    const rows = await this.rows.networkTokens(merchantAccountId, cards);
    const byCard = new Map(rows.map((row) => [row.payment_method_id, row]));
    for (const use of wanted) {
      const id = ids[use.position - 1];
      const row = byCard.get(id);
      if (!row) {
        if (!orEmptyString(use.name).orEmpty) throw new MissingNetworkTokenError(use.token, use.position, id);
        continue;
      }
      if (byPosition.has(use.position)) continue;
      byPosition.set(use.position, {
        id: row.id,
        expirationDate: row.expiration_date,
        token: () =>
          this.sealer.openJson<{ t: string }>(
            networkTokenAad(merchantAccountId, id, row.id),
            { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id },
            `network token ${row.id}`,
          ).t,
      });
    }
    return byPosition;
  }

  /**
   * Asks `supply` once per card whose CARD_CRYPTOGRAM(_OR_EMPTY_STRING) is used and that has a token
   * (one at a time: a token requestor is asked no more than needed). A plain name left without one is
   * MissingCryptogramError; an `_OR_EMPTY_STRING` one is then `""`.
   */
  private async cryptograms(
    ids: readonly string[],
    uses: readonly PlaceholderUse[],
    tokens: Map<number, NetworkTokenValues>,
    supply: CryptogramSupplier | undefined,
  ): Promise<void> {
    const asked = new Set<number>();
    for (const use of uses) {
      if (!isCryptogramName(use.name)) continue;
      const token = tokens.get(use.position);
      if (!token) continue; // no network token: refused already (plain) or "" (_OR_EMPTY_STRING)
      if (!asked.has(use.position)) {
        asked.add(use.position);
        const cryptogram = supply ? await supply(use.position, ids[use.position - 1], token) : null;
        if (cryptogram !== null) token.cryptogram = cryptogram;
      }
      if (token.cryptogram === undefined && !orEmptyString(use.name).orEmpty)
        throw new MissingCryptogramError(use.token, use.position);
    }
  }

  private async present(merchantAccountId: string, ids: readonly string[]): Promise<Map<string, SealedCardRow>> {
    const byId = await this.sealedRows(merchantAccountId, ids);
    ids.forEach((id, index) => {
      if (!byId.has(id)) throw new UnknownPaymentMethodError(index + 1, id);
    });
    return byId;
  }

  /**
   * Values keyed by placeholder token (CARD_NUMBER_1, …): for the placeholders in `uses`, or for
   * every name at every position when it is omitted. Every listed payment method must exist; a card
   * is decrypted only when one of its secret values (number, its BIN or last four, holder name) is used.
   */
  async resolve(
    merchantAccountId: string,
    ids: readonly string[],
    uses?: readonly PlaceholderUse[],
    cryptograms?: CryptogramSupplier,
  ): Promise<Map<string, string>> {
    const values = new Map<string, string>();
    if (ids.length === 0) return values;
    const byId = await this.present(merchantAccountId, ids);
    const wanted =
      uses ??
      ids.flatMap((_, index) =>
        CARD_PLACEHOLDER_NAMES.map((name) => ({ token: `${name}_${index + 1}`, name, position: index + 1 })),
      );
    const tokens = await this.networkTokens(merchantAccountId, ids, wanted);
    await this.cryptograms(ids, wanted, tokens, cryptograms);
    const opened = new Map<number, CardSecrets>();
    for (const use of wanted) {
      if (values.has(use.token)) continue;
      const id = ids[use.position - 1];
      const row = byId.get(id)!;
      const card = () => {
        let secrets = opened.get(use.position);
        if (!secrets) {
          secrets = this.vault.open(merchantAccountId, id, {
            ciphertext: row.ciphertext,
            wrappedKey: row.wrapped_key,
            masterKeyId: row.master_key_id,
          });
          opened.set(use.position, secrets);
        }
        return secrets;
      };
      values.set(use.token, placeholderValue(use.name, row.expiration_date, card, undefined, tokens.get(use.position)));
    }
    return values;
  }
}

/**
 * The names a stored payment method fills when no uses are given: the card's own, so neither the
 * security code (which it never holds) nor a network token's (asked for only by name), nor the BIN and
 * last four (parts of the number, asked for only by name).
 */
const CARD_PLACEHOLDER_NAMES = PLACEHOLDER_NAMES.filter(
  (name) =>
    name !== 'CARD_SECURITY_CODE' &&
    name !== 'CARD_BIN' &&
    name !== 'CARD_LAST4' &&
    !isNetworkTokenName(name) &&
    !isThreeDSecureName(name),
);

/**
 * One placeholder's value from a card: `card` opens it (called only for the number, BIN, last four or holder name),
 * `securityCode` only for CARD_SECURITY_CODE (a checkout session's; a payment method has none).
 */
export function placeholderValue(
  name: PlaceholderName,
  expirationDate: string,
  card: () => CardSecrets,
  securityCode?: () => string,
  networkToken?: NetworkTokenValues,
): string {
  // A stored card holds no 3-D Secure values: the scan refused the plain names, the twins are "".
  // (A checkout session's come from CheckoutSessionSource, which fills them before asking here.)
  if (isThreeDSecureName(name)) return '';
  if (isNetworkTokenName(name)) {
    // The scan or the resolver refused a plain name without a token; what is left is "".
    if (!networkToken) return '';
    const base = orEmptyString(name).base;
    if (base === 'CARD_NETWORK_TOKEN') return networkToken.token();
    // The resolver refused a plain name without a cryptogram; what is left is "".
    if (base === 'CARD_CRYPTOGRAM') return networkToken.cryptogram ?? '';
    const expiry = parseExpirationDate(networkToken.expirationDate)!;
    return expiryPart(base.slice('CARD_NETWORK_TOKEN_'.length), networkToken.expirationDate, expiry);
  }
  if (name === 'CARD_NUMBER') return card().number;
  if (name === 'CARD_BIN') return card().number.slice(0, 6);
  if (name === 'CARD_LAST4') return card().number.slice(-4);
  if (name === 'CARDHOLDER_NAME') return card().cardholderName ?? '';
  if (name === 'CARD_SECURITY_CODE') {
    if (!securityCode) throw new Error('no security code for this card'); // the scan refuses it first: a bug, not user input
    return securityCode();
  }
  return expiryPart(name.slice('CARD_'.length), expirationDate, parseExpirationDate(expirationDate)!);
}

/** EXPIRATION_DATE(_M|_MM|_YY|_YYYY|_MMYY) of an `MM/YY` expiry. */
function expiryPart(part: string, expirationDate: string, expiry: { month: number; year: number }): string {
  const mm = String(expiry.month).padStart(2, '0');
  const yy = String(expiry.year).slice(2);
  if (part === 'EXPIRATION_DATE_M') return String(expiry.month);
  if (part === 'EXPIRATION_DATE_MM') return mm;
  if (part === 'EXPIRATION_DATE_YY') return yy;
  if (part === 'EXPIRATION_DATE_YYYY') return String(expiry.year);
  if (part === 'EXPIRATION_DATE_MMYY') return mm + yy;
  return expirationDate;
}
