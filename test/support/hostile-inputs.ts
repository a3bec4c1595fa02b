/**
 * Inputs shaped to make a careless scanner backtrack or rescan, each a function of its size: the unit
 * tests run the large size once (it must finish and be right), and `npm run bench:linear` measures the
 * CPU of a quarter against the whole, which a quadratic cost makes 16 times, a linear one 4.
 */
import type { BodyEncoding } from '../../src/modules/vault/placeholders/placeholder-encodings';
import { type EscapeStyle, findPlaceholders } from '../../src/modules/vault/placeholders/placeholder-grammar';
import {
  fillBytes,
  filledValues,
  PlaceholderError,
  type PlaceholderScan,
  scanText,
  type TemplateSecrets,
} from '../../src/modules/vault/placeholders/placeholders';

export const MIB = 1024 * 1024;

/** Texts for the placeholder scanner and filler (docs/placeholders.md), by name. */
export const PLACEHOLDER_INPUTS: Array<[string, (n: number) => string]> = [
  ['backslashes', (n) => '\\'.repeat(n)],
  ['backslashes then an unterminated {{', (n) => `${'\\'.repeat(n - 16)}{{ CARD_NUMBER_1`],
  ['{{ runs', (n) => '{'.repeat(n)],
  ['unterminated {{ with a token', (n) => '{{ CARD_NUMBER_1 '.repeat(n / 17)],
  ['{{ then spaces, never closed', (n) => `{{${' '.repeat(n - 2)}`],
  ['{{ then one long token, never closed', (n) => `{{ A${'_1'.repeat(n / 2 - 2)}`],
  ['backslash runs between {{', (n) => '\\\\\\\\{{'.repeat(n / 6)],
  ['escaped placeholders', (n) => '\\\\{{ CARD_NUMBER_1 }}'.repeat(n / 21)],
  // The expression grammar: pipes, arguments and `or`, whole, half-written and escaped.
  ['one expression of pipes, never closed', (n) => `{{ CARD_NUMBER_1${' | hex'.repeat(n / 6 - 4)}`],
  ['one or-chain, never closed', (n) => `{{ CARD_NUMBER_1${' or CARD_NUMBER_1'.repeat(n / 17 - 2)}`],
  ['half-written pipes', (n) => '{{ CARD_NUMBER_1 | '.repeat(n / 19)],
  ['half-written arguments', (n) => '{{ CARD_NUMBER_1 | pad_left(6, "'.repeat(n / 32)],
  ['escaped half-written expressions', (n) => '\\{{ CARD_NUMBER_1 or {{ CARD_NUMBER_1 | x('.repeat(n / 42)],
  ['one string argument, never closed', (n) => `{{ CARD_NUMBER_1 | date("${'M'.repeat(n - 30)}`],
  ['one argument list, never closed', (n) => `{{ CARD_NUMBER_1 | pad_left(${'6, '.repeat(n / 3 - 10)}`],
  ['{% runs', (n) => '{%'.repeat(n / 2)],
  ['{{% runs', (n) => '{{%'.repeat(n / 3)],
  ['if tags, each inside the last', (n) => '{% if CARD_NUMBER_1 %}'.repeat(n / 22)],
  ['one if condition, never closed', (n) => `{% if CARD_NUMBER_1${' or CARD_NUMBER_1'.repeat(n / 17 - 2)}`],
  ['else and endif outside an if', (n) => '{% else %}{% endif %}'.repeat(n / 21)],
  ['whole blocks', (n) => '{% if CARD_NUMBER_1 %}{{ CARD_NUMBER_1 }}{% else %}x{% endif %}'.repeat(n / 62)],
  ['escaped tags', (n) => '\\{% if CARD_NUMBER_1 %}\\{% endif %}'.repeat(n / 36)],
  ['network-token names', (n) => '{{ CARD_NETWORK_TOKEN_EXPIRATION_DATE_MMYY_OR_EMPTY_STRING_1 }}'.repeat(n / 62)],
  ['almost network-token names', (n) => '{{ CARD_NETWORK_TOKEN_EXPIRATION_DATE_MMYY_OR_EMPTY_STRIN'.repeat(n / 56)],
  ['cryptogram names', (n) => '{{ CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 }}{{CARD_CRYPTOGRAM_1}}'.repeat(n / 60)],
  ['almost cryptogram names', (n) => '{{ CARD_CRYPTOGRAM_OR_EMPTY_STRIN'.repeat(n / 33)],
  ['3-D Secure names', (n) => '{{ CARD_3DS_CAVV_OR_EMPTY_STRING_1 }}'.repeat(n / 37)],
  ['almost 3-D Secure names', (n) => '{{ CARD_3DS_DS_TRANSACTION_ID_OR_EMPTY_STRIN'.repeat(n / 45)],
  [
    'cryptogram or-chains in if tags',
    (n) =>
      '{% if CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 or CARD_CRYPTOGRAM_1 %}{{ CARD_CRYPTOGRAM_1 | raw }}{% endif %}'.repeat(
        n / 100,
      ),
  ],
  [
    'network-token or-chains in if tags',
    (n) =>
      '{% if CARD_NETWORK_TOKEN_OR_EMPTY_STRING_1 or CARD_NUMBER_1 %}{{ CARD_NETWORK_TOKEN_1 }}{% endif %}'.repeat(
        n / 100,
      ),
  ],
  ['whole expressions', (n) => '{{ CARD_NUMBER_1 or CARD_NUMBER_1 | last4 | pad_left(8, "*") | raw }}'.repeat(n / 70)],
  ['half-written secret arguments', (n) => '{{ CARD_NUMBER_1 | hmac_sha256(SECRET.'.repeat(n / 38)],
  ['one secret name, never closed', (n) => `{{ CARD_NUMBER_1 | hmac_sha256(SECRET.${'k'.repeat(n - 40)}`],
  ['secret arguments, never closed', (n) => `{{ CARD_NUMBER_1 | hmac_sha256(${'SECRET.k, '.repeat(n / 10 - 4)}`],
];

/** Whole hmac_sha256(SECRET.k) expressions, back to back, about `n` characters. */
export const HMAC_EXPRESSION = '{{ CARD_NUMBER_1 | hmac_sha256(SECRET.k) | base64 }}';
export const hmacExpressions = (n: number): string => HMAC_EXPRESSION.repeat(Math.floor(n / HMAC_EXPRESSION.length));

/** A body dense with placeholders, one escaped after each whole one, about `n` characters. */
export const densePlaceholders = (n: number): string => '{{ CARD_NUMBER_1 }}\\{{CARDHOLDER_NAME_1}}'.repeat(n / 41);

/** A value for every token the placeholder inputs write whole. */
export const SUBSTITUTED = new Map(
  [
    'CARD_NUMBER_1',
    'CARD_NETWORK_TOKEN_1',
    'CARD_NETWORK_TOKEN_OR_EMPTY_STRING_1',
    'CARD_NETWORK_TOKEN_EXPIRATION_DATE_MMYY_OR_EMPTY_STRING_1',
    'CARD_CRYPTOGRAM_1',
    'CARD_CRYPTOGRAM_OR_EMPTY_STRING_1',
    'CARD_3DS_CAVV_OR_EMPTY_STRING_1',
  ].map((token) => [token, '4111111111111111']),
);

/**
 * `scan`'s text filled as the executor fills a body: each distinct whole match's value once (filledValues, from
 * SUBSTITUTED, escaped for `encoding`), then the bytes (fillBytes).
 */
export function fillSubstituted(scan: PlaceholderScan, encoding: BodyEncoding, secrets?: TemplateSecrets): Buffer {
  return fillBytes(Buffer.from(scan.text, 'latin1'), scan, filledValues(scan, SUBSTITUTED, encoding, secrets).encoded);
}

/** `n` pieces of text that hold card numbers, long digit runs and encoded digits, for the card-number search. */
export const cardNumberText = (n: number): string =>
  Array.from({ length: n }, (_, i) =>
    i % 3 === 0 ? '4111 1111 1111 1111 ' : i % 3 === 1 ? `${'7'.repeat(18)}-` : '&#52;\\u0031%31 1111 ',
  ).join('');

/** Unclosed JSON strings, form fields and XML attributes named like security codes, `n` of each. */
export const authenticationDataText = (n: number): string =>
  `${'"a":"'.repeat(n)}${'?cvv=1'.repeat(n)}${'<cvv a="'.repeat(n)}`;

/** 1 MiB of digits and 1 MiB of near-PANs (19 digits), for the card-number mask. */
export const digitRuns = (n: number): string[] => ['7'.repeat(n), `${'4'.repeat(18)} `.repeat(Math.floor(n / 19))];

/** An answer of `n` items, each with a card number, for the response rules. */
export const ruleAnswer = (n: number) => ({
  items: Array.from({ length: n }, (_, i) => ({ pan: '4111111111111111', id: i, note: 'x' })),
});

/** An Accept header of `n` ranges before the one that counts. */
export const longAccept = (n: number): string => `${'text/x-a;q=0.1, '.repeat(n)}application/json`;

/** A template of `n` unclosed braces before a placeholder. */
export const openBraces = (n: number): string => '{'.repeat(n) + 'body';

/** scanText, which stops at the first bad placeholder (a refusal is an answer too). */
export function scanUntilRefused(text: string, style: EscapeStyle): void {
  try {
    scanText(text, 1, style);
  } catch (error) {
    if (!(error instanceof PlaceholderError)) throw error;
  }
}

/** Every match, known name or not: scanText would stop at the first unknown name, which the grammar still matches. */
export function matchAll(text: string, style: EscapeStyle): PlaceholderScan {
  return { text, style, matches: findPlaceholders(text, style), uses: [] };
}
