/** Card number rules, kept apart from any storage so they can be tested exhaustively. */
import { luhnValid, MAX_CARD_DIGITS, MIN_CARD_DIGITS } from '../../platform/card-data/card-numbers';
import { cardScheme, type CardScheme } from '../../platform/card-data/card-schemes';

export type { CardScheme };

/** Digits only, with the spaces and dashes people type removed; null when anything else is present. */
export function normaliseCardNumber(input: string): string | null {
  const digits = input.replace(/[ -]/g, '');
  return /^\d+$/.test(digits) ? digits : null;
}

/** Why a number is refused, in words that never contain the number. null when it is acceptable. */
export function cardNumberProblem(input: unknown): string | null {
  if (typeof input !== 'string') return 'must be a string of digits';
  const digits = normaliseCardNumber(input);
  if (digits === null) return 'must contain only digits (spaces and dashes are ignored)';
  if (digits.length < MIN_CARD_DIGITS || digits.length > MAX_CARD_DIGITS) return 'must have 12 to 19 digits';
  if (!luhnValid(digits)) return 'fails the Luhn check';
  return null;
}

/**
 * The scheme from the leading digits: the one table the Secure Fields frames use too (`platform/card-data/
 * card-schemes.ts`, credit-card-type's ranges).
 */
export function schemeOf(digits: string): CardScheme {
  return cardScheme(digits);
}

export const EXPIRATION_DATE_PATTERN = /^(0[1-9]|1[0-2])\/(\d{2})$/;

/**
 * Why an expiry is refused, or null. The one rule for a stored card's expiry: POST /payment-methods
 * (its DTO) and a card a response rule tokenizes from a downstream's answer (decision 0117).
 */
export function expirationDateProblem(value: unknown): string | null {
  return typeof value === 'string' && EXPIRATION_DATE_PATTERN.test(value)
    ? null
    : 'must be MM/YY with a month from 01 to 12';
}

export const CARDHOLDER_NAME_MAX_LENGTH = 200;

/**
 * Why a cardholder name is refused, in words that never contain it; null when it is acceptable. The
 * one rule for a stored card's name, as expirationDateProblem is for its expiry. It may be placed into
 * forwarded header values: no line breaks or other control characters, C1 (U+0080–U+009F) included,
 * which no header or JSON consumer expects in a name; and no lone surrogate, which has no UTF-8 form.
 */
export function cardholderNameProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length < 1 || value.length > CARDHOLDER_NAME_MAX_LENGTH)
    return `must be 1 to ${CARDHOLDER_NAME_MAX_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) return 'must not contain control characters';
  if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed())
    return 'must not contain a lone UTF-16 surrogate';
  return null;
}

interface Expiry {
  month: number;
  /** Four digits. */
  year: number;
}

export function parseExpirationDate(value: string): Expiry | null {
  const match = EXPIRATION_DATE_PATTERN.exec(value);
  return match ? { month: Number(match[1]), year: 2000 + Number(match[2]) } : null;
}
