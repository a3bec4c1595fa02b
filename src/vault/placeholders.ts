/**
 * The placeholder grammar of forwarded bodies and header values (docs/placeholders.md):
 *
 *   {{ NAME_X }}   or   {{NAME_X}}   (spaces inside the braces optional; only spaces)
 *
 * NAME is one of PLACEHOLDER_NAMES and X (1–100) is a position in x-vault-forward-payment-methods.
 * A backslash right before a placeholder escapes it: `\{{ CARD_NUMBER_1 }}` is sent as the literal
 * `{{ CARD_NUMBER_1 }}` (in a JSON body the backslash is written `\\`, and both characters go). Braces around anything that is not an upper-case NAME_X (`{{ name }}`,
 * `{{ 1 }}`, JSON such as `{"a":{"b":1}}`) are not placeholders and pass untouched; an upper-case
 * NAME_X whose NAME is unknown is an error, so a typo is never sent on silently.
 */
export const PLACEHOLDER_NAMES = [
  'CARD_NUMBER',
  'CARD_EXPIRATION_DATE',
  'CARD_EXPIRATION_DATE_M',
  'CARD_EXPIRATION_DATE_MM',
  'CARD_EXPIRATION_DATE_YY',
  'CARD_EXPIRATION_DATE_YYYY',
  'CARDHOLDER_NAME',
] as const;
export type PlaceholderName = (typeof PLACEHOLDER_NAMES)[number];

const KNOWN = new Set<string>(PLACEHOLDER_NAMES);

// Group 1: backslashes right before the braces (an escape); group 2: the token, e.g. CARD_NUMBER_1.
const PLACEHOLDER = /(\\*)\{\{ *([A-Z][A-Z0-9_]*_[0-9]+) *\}\}/g;

/**
 * The escape before a placeholder: one backslash in raw text; in a JSON document a backslash can only
 * be written as `\\`, so there the escape is those two characters.
 */
export type EscapeStyle = 'raw' | 'json';
const ESCAPE_LENGTH: Record<EscapeStyle, number> = { raw: 1, json: 2 };

function escaped(backslashes: string, style: EscapeStyle): boolean {
  return backslashes.length >= ESCAPE_LENGTH[style];
}
const TOKEN = /^([A-Z][A-Z0-9_]*)_([0-9]+)$/;

export interface PlaceholderUse {
  /** As written between the braces, e.g. CARD_NUMBER_1. */
  token: string;
  name: PlaceholderName;
  /** 1-based position in x-vault-forward-payment-methods. */
  position: number;
}

export class PlaceholderError extends Error {
  constructor(
    readonly token: string,
    readonly reason: 'unknown-name' | 'position-out-of-range',
    message: string,
  ) {
    super(message);
    this.name = 'PlaceholderError';
  }
}

/**
 * Every placeholder in `text`, checked against the names and the number of listed payment methods.
 * Throws PlaceholderError on the first bad one (the message names the token, never a value).
 */
export function scanPlaceholders(text: string, paymentMethodCount: number, style: EscapeStyle = 'raw'): PlaceholderUse[] {
  const uses: PlaceholderUse[] = [];
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (escaped(match[1], style)) continue;
    const token = match[2];
    const [, name, digits] = TOKEN.exec(token)!;
    if (!KNOWN.has(name)) {
      throw new PlaceholderError(token, 'unknown-name', `{{ ${token} }} is not a placeholder name; known: ${PLACEHOLDER_NAMES.map((n) => `${n}_X`).join(', ')}`);
    }
    const position = Number(digits);
    if (position < 1 || position > paymentMethodCount || digits.startsWith('0')) {
      throw new PlaceholderError(
        token,
        'position-out-of-range',
        paymentMethodCount === 0
          ? `{{ ${token} }} needs x-vault-forward-payment-methods, which lists no payment method`
          : `{{ ${token} }} refers to position ${digits}, but x-vault-forward-payment-methods lists ${paymentMethodCount}`,
      );
    }
    uses.push({ token, name: name as PlaceholderName, position });
  }
  return uses;
}

/**
 * Replaces each placeholder with `encode(value)`, and unescapes escaped ones. `values` is keyed by
 * token (CARD_NUMBER_1); call scanPlaceholders first, so every token here is known.
 */
export function substitutePlaceholders(
  text: string,
  values: ReadonlyMap<string, string>,
  encode: (value: string) => string = (v) => v,
  style: EscapeStyle = 'raw',
): string {
  return text.replace(PLACEHOLDER, (whole, backslashes: string, token: string) => {
    // Drop the escape itself; any backslashes before it are ordinary text.
    if (escaped(backslashes, style)) return whole.slice(ESCAPE_LENGTH[style]);
    const value = values.get(token);
    if (value === undefined) throw new Error(`no value resolved for ${token}`); // a bug, not user input
    return `${backslashes}${encode(value)}`;
  });
}

/** For a JSON body: the value as the inside of a JSON string, so quotes cannot break out of it. */
export function jsonStringContent(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}
