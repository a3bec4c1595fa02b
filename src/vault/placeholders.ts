/**
 * The placeholder grammar of forwarded bodies and header values (docs/placeholders.md):
 *
 *   {{ NAME_X }}   or   {{NAME_X}}   (spaces inside the braces optional; only spaces)
 *
 * NAME is one of PLACEHOLDER_NAMES and X (1–100) is a position among the cards the forward's source
 * lists (its payment methods, or the one card of a checkout session).
 * A backslash right before a placeholder escapes it: `\{{ CARD_NUMBER_1 }}` is sent as the literal
 * `{{ CARD_NUMBER_1 }}` (in a JSON body the backslash is written `\\`, and both characters go).
 * Braces around anything that is not an upper-case NAME_X (`{{ name }}`, `{{ 1 }}`, JSON such as
 * `{"a":{"b":1}}`) are not placeholders and pass untouched; an upper-case NAME_X whose NAME is
 * unknown is an error, so a typo is never sent on silently.
 */

import { echoed } from '../common/problem/echo';
export const PLACEHOLDER_NAMES = [
  'CARD_NUMBER',
  'CARD_EXPIRATION_DATE',
  'CARD_EXPIRATION_DATE_M',
  'CARD_EXPIRATION_DATE_MM',
  'CARD_EXPIRATION_DATE_YY',
  'CARD_EXPIRATION_DATE_YYYY',
  'CARDHOLDER_NAME',
  // Only a checkout session holds one (briefly): stored payment methods never keep a security code.
  'CARD_SECURITY_CODE',
] as const;
export type PlaceholderName = (typeof PLACEHOLDER_NAMES)[number];

const KNOWN = new Set<string>(PLACEHOLDER_NAMES);

/**
 * The escape before a placeholder: one backslash in raw text; in a JSON document a backslash can only
 * be written as `\\`, so there the escape is those two characters.
 */
export type EscapeStyle = 'raw' | 'json';
const ESCAPE_LENGTH: Record<EscapeStyle, number> = { raw: 1, json: 2 };

export interface PlaceholderUse {
  /** As written between the braces, e.g. CARD_NUMBER_1. */
  token: string;
  name: PlaceholderName;
  /** 1-based position in x-vault-forward-payment-methods. */
  position: number;
}

/**
 * What a forward's placeholder source offers to the scan: how many positions, whether the security
 * code exists, and how to name the source in a message (a header, which only forwarding knows).
 */
export interface PlaceholderSourceShape {
  positions: number;
  securityCode: boolean;
  /** Names what lists the cards, e.g. "x-vault-forward-payment-methods". */
  listedBy: string;
  /** Names what would offer the security code, for the message that it is not available here. */
  securityCodeFrom: string;
}

/** The shape of a plain list of `count` payment methods (no security code). */
export function paymentMethodsShape(
  count: number,
  listedBy = 'x-vault-forward-payment-methods',
  securityCodeFrom = 'a checkout session',
): PlaceholderSourceShape {
  return { positions: count, securityCode: false, listedBy, securityCodeFrom };
}

export class PlaceholderError extends Error {
  constructor(
    readonly token: string,
    readonly reason: 'unknown-name' | 'position-out-of-range' | 'not-available',
    message: string,
  ) {
    super(message);
    this.name = 'PlaceholderError';
  }
}

/**
 * One placeholder as found in the text: `start` is where its escape backslashes begin (those after
 * the previous placeholder), `open` is its `{{`, `end` is just past its `}}`.
 */
export interface PlaceholderMatch {
  start: number;
  open: number;
  end: number;
  token: string;
  escaped: boolean;
}

/** The result of one pass over a text: what the fill needs, so the text is never scanned twice. */
export interface PlaceholderScan {
  text: string;
  style: EscapeStyle;
  matches: PlaceholderMatch[];
  /** The unescaped placeholders, in text order. */
  uses: PlaceholderUse[];
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const SPACE = 0x20;
const BACKSLASH = 0x5c;
const UNDERSCORE = 0x5f;
const isUpper = (c: number) => c >= 0x41 && c <= 0x5a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isTokenChar = (c: number) => isUpper(c) || isDigit(c) || c === UNDERSCORE;

/**
 * The grammar's regular expression, `(\\*)\{\{ *([A-Z][A-Z0-9_]*_[0-9]+) *\}\}`, written as a single
 * pass: as a regex it backtracks over every run of backslashes, quadratic in the run's length (a
 * 60 KB body of backslashes held the event loop for seconds). Each character is looked at a bounded
 * number of times: an attempt at a `{{` reads only spaces and token characters, none of which can
 * start the next `{{`, and the backslashes before a placeholder are counted back to the previous one.
 */
export function findPlaceholders(text: string, style: EscapeStyle): PlaceholderMatch[] {
  const matches: PlaceholderMatch[] = [];
  let previousEnd = 0;
  let open = text.indexOf('{{');
  while (open >= 0) {
    let i = open + 2;
    while (text.charCodeAt(i) === SPACE) i++;
    const tokenStart = i;
    while (isTokenChar(text.charCodeAt(i))) i++;
    const tokenEnd = i;
    while (text.charCodeAt(i) === SPACE) i++;
    if (
      text.charCodeAt(i) === CLOSE_BRACE &&
      text.charCodeAt(i + 1) === CLOSE_BRACE &&
      isName(text, tokenStart, tokenEnd)
    ) {
      let start = open;
      while (start > previousEnd && text.charCodeAt(start - 1) === BACKSLASH) start--;
      previousEnd = i + 2;
      matches.push({
        start,
        open,
        end: previousEnd,
        token: text.slice(tokenStart, tokenEnd),
        escaped: open - start >= ESCAPE_LENGTH[style],
      });
      open = text.indexOf('{{', previousEnd);
    } else {
      // Nothing read since the braces can open another pair, except a third brace right after them.
      open = text.charCodeAt(open + 2) === OPEN_BRACE ? open + 1 : text.indexOf('{{', i);
    }
  }
  return matches;
}

/** NAME_X: starts with A–Z, ends in digits that follow an underscore, NAME not empty. */
function isName(text: string, start: number, end: number): boolean {
  if (end - start < 3 || !isUpper(text.charCodeAt(start))) return false;
  let digits = end;
  while (isDigit(text.charCodeAt(digits - 1))) digits--;
  return digits < end && digits - 1 > start && text.charCodeAt(digits - 1) === UNDERSCORE;
}

/**
 * Every placeholder in `text`, checked against the names and the number of listed payment methods.
 * Throws PlaceholderError on the first bad one (the message names the token, never a value).
 */
export function scanText(
  text: string,
  source: number | PlaceholderSourceShape,
  style: EscapeStyle = 'raw',
): PlaceholderScan {
  const shape = typeof source === 'number' ? paymentMethodsShape(source) : source;
  const matches = findPlaceholders(text, style);
  const uses: PlaceholderUse[] = [];
  for (const { token, escaped } of matches) {
    if (escaped) continue;
    const underscore = token.lastIndexOf('_');
    const name = token.slice(0, underscore);
    const digits = token.slice(underscore + 1);
    if (!KNOWN.has(name)) {
      throw new PlaceholderError(
        token,
        'unknown-name',
        `{{ ${echoed(token)} }} is not a placeholder name; known: ${PLACEHOLDER_NAMES.map((n) => `${n}_X`).join(', ')}`,
      );
    }
    const position = Number(digits);
    if (position < 1 || position > shape.positions || digits.startsWith('0')) {
      throw new PlaceholderError(
        token,
        'position-out-of-range',
        shape.positions === 0
          ? `{{ ${echoed(token)} }} needs ${shape.listedBy}, which lists no payment method`
          : `{{ ${echoed(token)} }} refers to position ${digits}, but ${shape.listedBy} lists ${shape.positions}`,
      );
    }
    if (name === 'CARD_SECURITY_CODE' && !shape.securityCode) {
      throw new PlaceholderError(
        token,
        'not-available',
        `{{ ${echoed(token)} }} is available only with ${shape.securityCodeFrom}: stored payment methods keep no security code`,
      );
    }
    uses.push({ token, name: name as PlaceholderName, position });
  }
  return { text, style, matches, uses };
}

/** The placeholders `text` uses; see scanText. */
export function scanPlaceholders(
  text: string,
  source: number | PlaceholderSourceShape,
  style: EscapeStyle = 'raw',
): PlaceholderUse[] {
  return scanText(text, source, style).uses;
}

/**
 * The scanned text with each placeholder replaced by `replacement(token)` and each escaped one
 * unescaped: the escape itself goes, any backslashes before it are ordinary text.
 */
export function fillScan(scan: PlaceholderScan, replacement: (token: string) => string): string {
  const { text, matches } = scan;
  if (matches.length === 0) return text;
  const skip = ESCAPE_LENGTH[scan.style];
  let out = '';
  let at = 0;
  for (const m of matches) {
    out += m.escaped
      ? text.slice(at, m.start) + text.slice(m.start + skip, m.end)
      : text.slice(at, m.open) + replacement(m.token);
    at = m.end;
  }
  return out + text.slice(at);
}

/**
 * The byte length of the filled body, computed before anything is built, so an oversized fill is
 * refused without allocating it. `scan` is of `source` read as latin1 (one character per byte);
 * `values` are the encoded bytes per token.
 */
export function filledByteLength(scan: PlaceholderScan, values: ReadonlyMap<string, Buffer>): number {
  const skip = ESCAPE_LENGTH[scan.style];
  let length = scan.text.length;
  for (const m of scan.matches) length += m.escaped ? -skip : valueOf(values, m.token).length - (m.end - m.open);
  return length;
}

/** `source` with its placeholders filled, into a buffer of exactly `filledByteLength` bytes. */
export function fillBytes(
  source: Buffer,
  scan: PlaceholderScan,
  values: ReadonlyMap<string, Buffer>,
  length = filledByteLength(scan, values),
): Buffer {
  if (scan.matches.length === 0) return source;
  const skip = ESCAPE_LENGTH[scan.style];
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  let written = 0;
  for (const m of scan.matches) {
    if (m.escaped) {
      written += source.copy(out, written, at, m.start);
      written += source.copy(out, written, m.start + skip, m.end);
    } else {
      written += source.copy(out, written, at, m.open);
      written += valueOf(values, m.token).copy(out, written);
    }
    at = m.end;
  }
  written += source.copy(out, written, at);
  if (written !== length) throw new Error(`filled ${written} bytes, expected ${length}`); // a bug, not user input
  return out;
}

function valueOf<T>(values: ReadonlyMap<string, T>, token: string): T {
  const value = values.get(token);
  if (value === undefined) throw new Error(`no value resolved for ${token}`); // a bug, not user input
  return value;
}

/**
 * Replaces each placeholder with `encode(value)`, and unescapes escaped ones. `values` is keyed by
 * token (CARD_NUMBER_1); every placeholder in `text` must have a value.
 */
export function substitutePlaceholders(
  text: string,
  values: ReadonlyMap<string, string>,
  encode: (value: string) => string = (v) => v,
  style: EscapeStyle = 'raw',
): string {
  return fillScan({ text, style, matches: findPlaceholders(text, style), uses: [] }, (token) =>
    encode(valueOf(values, token)),
  );
}

/** For a JSON body: the value as the inside of a JSON string, so quotes cannot break out of it. */
export function jsonStringContent(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}
