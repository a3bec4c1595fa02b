/**
 * Cryptograms for network tokens (docs/decisions/0100): per request, single-use, never stored. The
 * caller may send them (x-vault-forward-cryptograms); otherwise a TokenRequestor, when configured,
 * asks for one per card and attempt. A cryptogram exists only in the map of filled values: never log,
 * store, return or queue it.
 */
import { defineProblem } from '../../../platform/problem/problem';

/**
 * What a cryptogram looks like, from the caller or a token requestor: 8–128 characters of base64,
 * base64url or hex (Visa's TAVV and Mastercard's UCAF are 28 base64 characters), with at most two `=`
 * of padding. Anything else (a space, a quote, a line break) is refused before it is filled anywhere.
 */
export const CRYPTOGRAM_PATTERN = /^[A-Za-z0-9+/_-]{8,128}={0,2}$/;

export function isCryptogram(value: string): boolean {
  return CRYPTOGRAM_PATTERN.test(value);
}

/** What a token requestor is asked for one card's network token. */
export interface CryptogramRequest {
  merchantAccountId: string;
  paymentMethodId: string;
  /** The stored network token's id (payment_method_network_tokens.id). */
  networkTokenId: string;
  /** The network token (DPAN), opened for this request only. */
  token: string;
  /** The token's expiry, `MM/YY`. */
  expirationDate: string;
  /** x-vault-forward-merchant-initiated: a merchant-initiated use (no cardholder present). */
  merchantInitiated: boolean;
}

/**
 * Obtains a cryptogram for a stored network token. One implementation (HttpTokenRequestor: a
 * configured HTTP endpoint); without NETWORK_TOKEN_REQUESTOR_URL, `configured` is false and only
 * the caller's cryptograms fill CARD_CRYPTOGRAM_X.
 */
export interface TokenRequestor {
  readonly configured: boolean;
  /** The cryptogram, or TokenRequestorError; the message of neither names a value. */
  cryptogram(request: CryptogramRequest): Promise<string>;
}

export const TOKEN_REQUESTOR = Symbol('TOKEN_REQUESTOR');

/** The token requestor could not give a cryptogram: it did not answer in time, or not usefully. */
export class TokenRequestorError extends Error {
  constructor(
    readonly kind: 'timeout' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'TokenRequestorError';
  }
}

/** No endpoint configured: nothing can be asked (the forward's check refuses a plain name first). */
export const NO_TOKEN_REQUESTOR: TokenRequestor = {
  configured: false,
  cryptogram: () =>
    Promise.reject(new TokenRequestorError('failed', 'no token requestor is configured (NETWORK_TOKEN_REQUESTOR_URL)')),
};

/** Problems of POST /vault-forward (and of a queued job's attempt) when the token requestor fails. */
export const TokenRequestorErrors = {
  tokenRequestorFailed: defineProblem({
    code: 'token-requestor-failed',
    status: 502,
    title: 'Token requestor failed',
    description:
      'CARD_CRYPTOGRAM_X needed a cryptogram the request did not carry, and the token requestor ' +
      '(NETWORK_TOKEN_REQUESTOR_URL) could not be reached or did not answer 200 with a cryptogram. Nothing was ' +
      'sent to the target. Send the cryptogram in x-vault-forward-cryptograms, or retry.',
  }),
  tokenRequestorTimeout: defineProblem({
    code: 'token-requestor-timeout',
    status: 504,
    title: 'Token requestor timed out',
    description:
      'The token requestor (NETWORK_TOKEN_REQUESTOR_URL) did not answer within NETWORK_TOKEN_REQUESTOR_TIMEOUT_MS. ' +
      'Nothing was sent to the target; a retry may succeed.',
  }),
};
