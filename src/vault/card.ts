/** Card number rules, kept apart from any storage so they can be tested exhaustively. */
import { luhnValid, MAX_CARD_DIGITS, MIN_CARD_DIGITS } from '../card-data/card-numbers';

export type CardScheme =
  'visa' | 'mastercard' | 'amex' | 'discover' | 'jcb' | 'diners' | 'unionpay' | 'maestro' | 'unknown';

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

const inRange = (prefix: string, from: number, to: number) => {
  const value = Number(prefix);
  return value >= from && value <= to;
};

/** The scheme from the leading digits (the BIN ranges the schemes publish), most specific first. */
export function schemeOf(digits: string): CardScheme {
  const p2 = digits.slice(0, 2);
  const p3 = digits.slice(0, 3);
  const p4 = digits.slice(0, 4);
  const p6 = digits.slice(0, 6);
  if (p2 === '34' || p2 === '37') return 'amex';
  if (inRange(p4, 3528, 3589)) return 'jcb';
  if (inRange(p3, 300, 305) || p4 === '3095' || p2 === '36' || p2 === '38' || p2 === '39') return 'diners';
  if (p4 === '6011' || inRange(p3, 644, 649) || p2 === '65' || inRange(p6, 622126, 622925)) return 'discover';
  if (p2 === '62' || p2 === '81') return 'unionpay';
  if (inRange(p2, 51, 55) || inRange(p4, 2221, 2720)) return 'mastercard';
  if (digits[0] === '4') return 'visa';
  if (
    ['5018', '5020', '5038', '5893', '6304', '6759', '6761', '6762', '6763'].includes(p4) ||
    p2 === '50' ||
    inRange(p2, 56, 58) ||
    p2 === '67'
  ) {
    return 'maestro';
  }
  return 'unknown';
}

export const EXPIRATION_DATE_PATTERN = /^(0[1-9]|1[0-2])\/(\d{2})$/;

export interface Expiry {
  month: number;
  /** Four digits. */
  year: number;
}

export function parseExpirationDate(value: string): Expiry | null {
  const match = EXPIRATION_DATE_PATTERN.exec(value);
  return match ? { month: Number(match[1]), year: 2000 + Number(match[2]) } : null;
}
