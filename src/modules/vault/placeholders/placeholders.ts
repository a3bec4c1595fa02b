/**
 * The placeholder checks and fill of forwarded bodies and header values (docs/placeholders.md); the
 * scanner is placeholder-grammar.ts, the functions placeholder-functions.ts, the escaping by content
 * type placeholder-encodings.ts:
 *
 *   {{ NAME_X }}   or   {{NAME_X}}   (spaces inside the braces optional; only spaces)
 *   {{ NAME_X or NAME_X | function(arguments) | raw }}      {% if NAME_X %}…{% else %}…{% endif %}
 *
 * NAME is one of PLACEHOLDER_NAMES and X (1–100) is a position among the cards the forward's source
 * lists (its payment methods, or the one card of a checkout session).
 * A backslash right before a placeholder escapes it: `\{{ CARD_NUMBER_1 }}` is sent as the literal
 * `{{ CARD_NUMBER_1 }}` (in a JSON body the backslash is written `\\`, and both characters go).
 * Braces around anything that is not an upper-case NAME_X (`{{ name }}`, `{{ 1 }}`, JSON such as
 * `{"a":{"b":1}}`) are not placeholders and pass untouched; an upper-case NAME_X whose NAME is
 * unknown is an error, so a typo is never sent on silently.
 */

import { echoed } from '../../../platform/problem/echo';
import { applyCall, checkCall, FUNCTION_NAMES, MAX_CALLS, TemplateSecrets } from './placeholder-functions';
import { BodyEncoding, encodeValue } from './placeholder-encodings';
import { ESCAPE_LENGTH, EscapeStyle, findPlaceholders, PlaceholderMatch } from './placeholder-grammar';

export type { TemplateSecrets } from './placeholder-functions';

export type { PlaceholderMatch } from './placeholder-grammar';
/**
 * Filled from a stored card's newest active network token (Gr4vy's names), and CARD_CRYPTOGRAM from
 * the per-request cryptogram for that token (the caller's x-vault-forward-cryptograms, or the token
 * requestor's; never stored, docs/decisions/0100). Each has an `_OR_EMPTY_STRING` twin that is `""`
 * where the card has no token, instead of a 400.
 */
const NETWORK_TOKEN_NAMES = [
  'CARD_NETWORK_TOKEN',
  'CARD_NETWORK_TOKEN_EXPIRATION_DATE',
  'CARD_NETWORK_TOKEN_EXPIRATION_DATE_M',
  'CARD_NETWORK_TOKEN_EXPIRATION_DATE_MM',
  'CARD_NETWORK_TOKEN_EXPIRATION_DATE_YY',
  'CARD_NETWORK_TOKEN_EXPIRATION_DATE_YYYY',
  'CARD_NETWORK_TOKEN_EXPIRATION_DATE_MMYY',
  'CARD_CRYPTOGRAM',
] as const;
const OR_EMPTY = '_OR_EMPTY_STRING';
/**
 * A checkout session's 3-D Secure values (decision 0101), with `_OR_EMPTY_STRING` twins that are `""`
 * where the session holds none (or not that one), and for stored payment methods, which never do.
 */
const THREE_D_SECURE_NAMES = [
  'CARD_3DS_CAVV',
  'CARD_3DS_ECI',
  'CARD_3DS_VERSION',
  'CARD_3DS_DIRECTORY_RESPONSE',
  'CARD_3DS_AUTHENTICATION_RESPONSE',
  'CARD_3DS_SERVER_TRANSACTION_ID',
  'CARD_3DS_DS_TRANSACTION_ID',
  'CARD_3DS_SCHEME',
] as const;

export const PLACEHOLDER_NAMES = [
  'CARD_NUMBER',
  'CARD_EXPIRATION_DATE',
  'CARD_EXPIRATION_DATE_M',
  'CARD_EXPIRATION_DATE_MM',
  'CARD_EXPIRATION_DATE_YY',
  'CARD_EXPIRATION_DATE_YYYY',
  'CARDHOLDER_NAME',
  // The first six and last four digits, what PCI DSS 3.4 allows showing: for a config that may not get the
  // number (a fraud tool, decision 0134).
  'CARD_BIN',
  'CARD_LAST4',
  // Only a checkout session holds one (briefly): stored payment methods never keep a security code.
  'CARD_SECURITY_CODE',
  ...NETWORK_TOKEN_NAMES,
  ...NETWORK_TOKEN_NAMES.map((name) => `${name}${OR_EMPTY}` as const),
  ...THREE_D_SECURE_NAMES,
  ...THREE_D_SECURE_NAMES.map((name) => `${name}${OR_EMPTY}` as const),
] as const;
export type PlaceholderName = (typeof PLACEHOLDER_NAMES)[number];

/** The plain name behind an `_OR_EMPTY_STRING` one (itself for a plain one), and whether it was one. */
export function orEmptyString(name: PlaceholderName): { base: string; orEmpty: boolean } {
  return name.endsWith(OR_EMPTY)
    ? { base: name.slice(0, -OR_EMPTY.length), orEmpty: true }
    : { base: name, orEmpty: false };
}

/** Whether the name is filled from a card's network token (docs/decisions/0086), its cryptogram included (0100). */
export function isNetworkTokenName(name: string): boolean {
  return name.startsWith('CARD_NETWORK_TOKEN') || name.startsWith('CARD_CRYPTOGRAM');
}

/** Whether the name is a checkout session's 3-D Secure value (plain or `_OR_EMPTY_STRING`), decision 0101. */
export function isThreeDSecureName(name: string): boolean {
  return name.startsWith('CARD_3DS_');
}

/** Whether the name is the per-request cryptogram of a card's network token (plain or `_OR_EMPTY_STRING`). */
export function isCryptogramName(name: string): boolean {
  return name.startsWith('CARD_CRYPTOGRAM');
}

const KNOWN = new Set<string>(PLACEHOLDER_NAMES);

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
  /** Whether its cards can have network tokens (stored payment methods; a checkout session's card cannot). */
  networkTokens: boolean;
  /** Whether it can hold 3-D Secure values (a checkout session; stored payment methods cannot). */
  threeDSecure?: boolean;
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
  return { positions: count, securityCode: false, networkTokens: true, listedBy, securityCodeFrom };
}

export class PlaceholderError extends Error {
  constructor(
    readonly token: string,
    readonly reason:
      | 'unknown-name'
      | 'position-out-of-range'
      | 'not-available'
      | 'malformed'
      | 'unknown-function'
      | 'bad-arguments'
      | 'unencodable',
    message: string,
  ) {
    super(message);
    this.name = 'PlaceholderError';
  }
}

/** The result of one pass over a text: what the fill needs, so the text is never scanned twice. */
export interface PlaceholderScan {
  text: string;
  style: EscapeStyle;
  matches: PlaceholderMatch[];
  /** The unescaped placeholders, in text order. */
  uses: PlaceholderUse[];
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
  for (const m of matches) {
    if (m.escaped) continue;
    if (m.malformed) {
      throw new PlaceholderError(
        m.kind ? m.key : m.token,
        'malformed',
        m.kind
          ? `{% ${echoed(m.key)} … at offset ${m.open}: ${m.malformed.message} (offset ${m.malformed.at})`
          : `{{ ${echoed(m.token)} … at offset ${m.open} is not a complete placeholder: ${m.malformed.message} at offset ${m.malformed.at}`,
      );
    }
    for (const token of m.tokens) uses.push(checkToken(token, shape));
    if (m.calls.length > MAX_CALLS) {
      throw new PlaceholderError(
        m.key,
        'bad-arguments',
        `{{ ${echoed(m.key)} }}: at most ${MAX_CALLS} functions in one placeholder`,
      );
    }
    const names = m.tokens.map((token) => token.slice(0, token.lastIndexOf('_')));
    m.calls.forEach((call, index) => {
      const problem = checkCall(call, { index, count: m.calls.length, names });
      if (problem === null) return;
      const known = FUNCTION_NAMES.includes(call.name);
      throw new PlaceholderError(
        m.key,
        known ? 'bad-arguments' : 'unknown-function',
        known
          ? `{{ ${echoed(m.key)} }}: ${problem} (offset ${call.at})`
          : `{{ ${echoed(m.key)} }}: unknown function "${echoed(call.name)}" at offset ${call.at}; known: ${FUNCTION_NAMES.join(', ')}`,
      );
    });
  }
  return { text, style, matches, uses };
}

/** One NAME_X checked against the names and the source's positions. */
function checkToken(token: string, shape: PlaceholderSourceShape): PlaceholderUse {
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
  if (!shape.networkTokens && isNetworkTokenName(name) && !name.endsWith(OR_EMPTY)) {
    throw new PlaceholderError(
      token,
      'not-available',
      `{{ ${echoed(token)} }} needs a stored payment method's network token, which ${shape.listedBy} ` +
        `cannot have; ${name}${OR_EMPTY}_${digits} gives "" instead`,
    );
  }
  if (!shape.threeDSecure && isThreeDSecureName(name) && !name.endsWith(OR_EMPTY)) {
    throw new PlaceholderError(
      token,
      'not-available',
      `{{ ${echoed(token)} }} needs a checkout session's 3-D Secure values, which ${shape.listedBy} ` +
        `cannot have; ${name}${OR_EMPTY}_${digits} gives "" instead`,
    );
  }
  return { token, name: name as PlaceholderName, position };
}

/** A `SECRET.name` argument in a scanned text: the name, its placeholder and the offset of its function. */
interface SecretUse {
  name: string;
  /** The placeholder, as a message names it. */
  placeholder: string;
  at: number;
}

/** Every `SECRET.name` that the unescaped placeholders of a scan read, in text order (one walk over its calls). */
export function secretUses(scan: PlaceholderScan): SecretUse[] {
  const found: SecretUse[] = [];
  for (const m of scan.matches) {
    if (m.escaped || m.malformed) continue;
    for (const call of m.calls)
      for (const arg of call.args)
        if (arg.kind === 'secret') found.push({ name: arg.name, placeholder: `{{ ${echoed(m.key)} }}`, at: call.at });
  }
  return found;
}

/** What a fill does with the scanned text, piece by piece (see walk). */
interface FillSink {
  copy(from: number, to: number): void;
  value(match: PlaceholderMatch): void;
}

/**
 * The one walk behind every fill: text outside the matches is copied, each placeholder's value
 * inserted, each escaped one unescaped (the escape goes, any backslashes before it are ordinary
 * text), and of an `{% if %}` block only the branch its condition chose (`truthy`) is kept, tags
 * removed. Half-written matches are text (scanText refuses them first).
 */
export function walk(scan: PlaceholderScan, truthy: (match: PlaceholderMatch) => boolean, sink: FillSink): void {
  const skip = ESCAPE_LENGTH[scan.style];
  let at = 0;
  let skipping = false;
  for (const m of scan.matches) {
    if (m.malformed) continue;
    if (!skipping) sink.copy(at, m.escaped ? m.start : m.open);
    if (m.escaped) {
      if (!skipping) sink.copy(m.start + skip, m.end);
    } else if (m.kind === 'if') {
      skipping = !truthy(m);
    } else if (m.kind === 'else') {
      skipping = !skipping;
    } else if (m.kind === 'endif') {
      skipping = false;
    } else if (!skipping) {
      sink.value(m);
    }
    at = m.end;
  }
  sink.copy(at, scan.text.length);
}

/**
 * The scanned text with each placeholder replaced by `replacement(match)` (an if's condition too:
 * its branch is chosen by whether that is empty); see walk.
 */
export function fillScan(scan: PlaceholderScan, replacement: (match: PlaceholderMatch) => string): string {
  const { text, matches } = scan;
  if (matches.length === 0) return text;
  let out = '';
  walk(scan, (m) => replacement(m) !== '', {
    copy: (from, to) => (out += text.slice(from, to)),
    value: (m) => (out += replacement(m)),
  });
  return out;
}

/**
 * The byte length of the filled body, computed before anything is built, so an oversized fill is
 * refused without allocating it. `scan` is of `source` read as latin1 (one character per byte);
 * `values` are the encoded bytes per match key (the token, for a plain placeholder; an if's condition
 * is true when its bytes are not empty).
 */
export function filledByteLength(scan: PlaceholderScan, values: ReadonlyMap<string, Buffer>): number {
  let length = 0;
  walk(scan, (m) => valueOf(values, m.key).length > 0, {
    copy: (from, to) => (length += to - from),
    value: (m) => (length += valueOf(values, m.key).length),
  });
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
  const out = Buffer.allocUnsafe(length);
  let written = 0;
  walk(scan, (m) => valueOf(values, m.key).length > 0, {
    copy: (from, to) => (written += source.copy(out, written, from, to)),
    value: (m) => (written += valueOf(values, m.key).copy(out, written)),
  });
  if (written !== length) throw new Error(`filled ${written} bytes, expected ${length}`); // a bug, not user input
  return out;
}

function valueOf<T>(values: ReadonlyMap<string, T>, token: string): T {
  const value = values.get(token);
  if (value === undefined) throw new Error(`no value resolved for ${token}`); // a bug, not user input
  return value;
}

/**
 * What a placeholder is replaced with: the first of its NAME_X whose value is not empty (the last
 * one's otherwise), through its functions, then escaped for `encoding` unless it ends in `| raw`.
 * `values` is keyed by token. Throws PlaceholderError (naming the placeholder, never a value) when
 * a function cannot take the value or the encoding cannot carry it.
 */
export function filledValue(
  match: PlaceholderMatch,
  values: ReadonlyMap<string, string>,
  encoding: BodyEncoding,
  secrets?: TemplateSecrets,
): string {
  let value = '';
  for (const token of match.tokens) {
    value = valueOf(values, token);
    if (value !== '') break;
  }
  let raw = false;
  for (const call of match.calls) {
    if (call.name === 'raw') {
      raw = true;
      continue;
    }
    const result = applyCall(call, value, secrets);
    if (typeof result !== 'string') {
      throw new PlaceholderError(match.key, 'bad-arguments', `{{ ${echoed(match.key)} }}: ${result.problem}`);
    }
    value = result;
  }
  if (raw) return value;
  const encoded = encodeValue(value, encoding);
  if (encoded === null) {
    throw new PlaceholderError(
      match.key,
      'unencodable',
      `{{ ${echoed(match.key)} }} has a character that the body (${encoding}) cannot carry`,
    );
  }
  return encoded;
}

/**
 * The values of a body's placeholders for fillBytes: each distinct one filled once (filledValue, escaped for
 * `encoding`), as UTF-8 bytes keyed by match key. Every distinct value is in the filled body at least once, so
 * once they add up past `enough` bytes the fill is known to be too large and the rest is not computed: `total`
 * (their sum so far) then exceeds `enough`.
 */
export function filledValues(
  scan: PlaceholderScan,
  values: ReadonlyMap<string, string>,
  encoding: BodyEncoding,
  secrets?: TemplateSecrets,
  enough = Infinity,
): { encoded: Map<string, Buffer>; total: number } {
  const encoded = new Map<string, Buffer>();
  let total = 0;
  for (const m of scan.matches) {
    if (m.escaped || m.malformed || encoded.has(m.key) || total > enough) continue;
    const value = Buffer.from(filledValue(m, values, encoding, secrets), 'utf8');
    total += value.length;
    encoded.set(m.key, value);
  }
  return { encoded, total };
}
