/**
 * What each field accepts and how it shows what was typed: pure functions, unit-tested
 * (test/unit/secure-fields.spec.ts). The scheme table is the server's (src/platform/card-data/card-schemes.ts).
 */
import { luhnValid } from '../../src/platform/card-data/card-numbers';
import { schemeLayout, securityCodeLengthOf } from '../../src/platform/card-data/card-schemes';

export interface Formatted {
  /** What the input shows. */
  text: string;
  /** What the controller sends: digits only for card data. */
  value: string;
  valid: boolean;
  scheme?: string;
}

const digitsOf = (text: string) => text.replace(/\D/g, '');

/** The number grouped as its scheme prints it (4-4-4-4, Amex 4-6-5), cut at the scheme's longest length. */
export function formatNumber(text: string): Formatted {
  const typed = digitsOf(text);
  const layout = schemeLayout(typed);
  const digits = typed.slice(0, Math.max(...layout.lengths));
  let shown = '';
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && layout.gaps.includes(i)) shown += ' ';
    shown += digits[i];
  }
  const valid = layout.lengths.includes(digits.length) && luhnValid(digits);
  return { text: shown, value: digits, valid, scheme: layout.scheme };
}

/**
 * MM/YY as typed: a first digit above 1 is a month on its own (`4` → `04/`), the slash is added after the month.
 * Valid when the month is 01–12 and the card has not expired at the end of that month, on the `now` given.
 */
export function formatExpiry(text: string, now: Date, deleting = false): Formatted {
  let digits = digitsOf(text).slice(0, 4);
  if (digits.length === 1 && digits > '1') digits = `0${digits}`;
  let shown = digits;
  if (digits.length > 2 || (digits.length === 2 && !deleting)) shown = `${digits.slice(0, 2)}/${digits.slice(2)}`;
  const value = digits.length === 4 ? `${digits.slice(0, 2)}/${digits.slice(2)}` : '';
  return { text: shown, value, valid: value !== '' && expiryValid(value, now) };
}

export function expiryValid(value: string, now: Date): boolean {
  const match = /^(0[1-9]|1[0-2])\/(\d{2})$/.exec(value);
  if (!match) return false;
  const month = Number(match[1]);
  const year = 2000 + Number(match[2]);
  const thisYear = now.getFullYear();
  const thisMonth = now.getMonth() + 1;
  if (year > thisYear + 20) return false;
  return year > thisYear || (year === thisYear && month >= thisMonth);
}

/**
 * The lengths a security code may have: given by the page (`lengths`, as the library sends [3, 4] for a stored
 * card of unknown scheme), else the scheme's (4 for Amex, 3 otherwise).
 */
export function securityCodeLengths(scheme: string | undefined, lengths: readonly number[] | undefined): number[] {
  const given = (lengths ?? []).filter((n) => Number.isInteger(n) && n >= 3 && n <= 4);
  if (given.length > 0 && !scheme) return given;
  return [securityCodeLengthOf(scheme)];
}

export function formatSecurityCode(text: string, lengths: readonly number[]): Formatted {
  const digits = digitsOf(text).slice(0, Math.max(...lengths));
  return { text: digits, value: digits, valid: lengths.includes(digits.length) };
}

/** A postal code: letters, digits, spaces and hyphens, 3 to 10 of them. */
export function formatPostalCode(text: string): Formatted {
  const shown = text.replace(/[^A-Za-z0-9 -]/g, '').slice(0, 10);
  const value = shown.trim();
  return { text: shown, value, valid: /^[A-Za-z0-9][A-Za-z0-9 -]{1,8}[A-Za-z0-9]$/.test(value) };
}

/** Where the caret goes after formatting: after as many digits (or characters) as stood before it. */
export function caretAfter(formatted: string, charactersBefore: number, counts: (c: string) => boolean): number {
  if (charactersBefore <= 0) return 0;
  let seen = 0;
  for (let i = 0; i < formatted.length; i++) {
    if (counts(formatted[i])) seen++;
    if (seen === charactersBefore) return i + 1;
  }
  return formatted.length;
}
