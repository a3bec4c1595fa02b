/**
 * The one card-number detector (decisions 0112, 0135). Every place that keeps or shows data the service did
 * not write itself — record bodies and URLs, log lines, span attributes, stored job answers, replays, an
 * answer's unmatched_pan — finds card numbers here, and nowhere else.
 *
 * A card number is 12 to 19 digits passing the Luhn check, recognised by its shape (decision 0135):
 * - a digit is any Unicode decimal digit (\p{Nd}: ASCII, fullwidth, Arabic-Indic, Devanagari, mathematical …)
 *   with its value, written as itself or as an escape: JSON `\uXXXX` (a surrogate pair's two too, and any
 *   number of backslashes before the `u`), `\xXX`, an XML/HTML numeric or hex reference (`&#52;`, `&#x34;`),
 *   a percent escape (`%34`), percent-encoded again any number of times (`%2534`, `%252534`), percent-encoded
 *   UTF-8 (`%EF%BC%94`), or UTF-8 bytes read one a character (text searched as Latin-1);
 * - digits are joined into a group by nothing, or by invisible characters only (Unicode format characters,
 *   category Cf: zero-width space, joiners, soft hyphen, U+FEFF, U+2060 …; and combining marks, Mn and Me,
 *   which is how a keycap digit `4️⃣` is written);
 * - groups are joined by any run of separators: any character that is neither a letter, a digit nor
 *   invisible (spaces of every kind, dashes, punctuation, symbols, controls, newlines), spelt as itself or as
 *   an escape (`%20`, `%2F`, `\u0020`, `\n`, `&#32;`, `&nbsp;`). Either every group but the last has at least
 *   four digits (4-4-4-4, 4-6-5, 4-4-4-4-3, and path segments `/4111/1111/1111/1111`), or the groups are
 *   uniform: every digit alone (`4 1 1 1 …`) or in pairs, the last no longer than the others;
 * - leading zeros are padding (ISO/IEC 7812 issues no card under industry identifier 0): the number follows them.
 * Not card numbers, though Luhn-valid: a run of digits with no separator counts only whole (20 digits in a row
 * are an id, not a card number with a digit more); a run wholly inside a UUID with a letter, or inside a hex id
 * of 16, 24, 32, 40 or 64 characters (trace and span ids, object ids, hashes); a lone run of 13, 16 or 19 digits that
 * reads as a millisecond, microsecond or nanosecond Unix time from 2015 to 2034 (no card is issued with those
 * lengths and first digits; a migration's name `CheckoutSessions1763917200000`); a lone run that is a decimal
 * number's fraction (`0.8444218515250481`: a float's digits), or two groups that are a decimal number
 * (`19114442871.64608`).
 *
 * A card number found is masked (PCI DSS 3.4) as binOf allows: the first six and last four digits kept from
 * 15 digits on, the last four only below; every other digit becomes `*`, whatever its spelling, and nothing
 * else in the text changes. Linear in the text: each character is read a bounded number of times, and each
 * group of digits is tried as the start of at most 19 digits' worth of groups.
 *
 * Text in bytes is read by readText (text-encodings.ts): UTF-8, UTF-16 and UTF-32 (either order, by byte-order mark, shape or
 * charset, the shape winning over a charset it contradicts), a multi-byte legacy charset by TextDecoder, and
 * Latin-1 otherwise; written back byte for byte but for what the mask changed.
 */
import {
  ASCII_KINDS,
  DIGIT,
  digitValue,
  hexValue,
  INVISIBLE,
  isAsciiAlphanumeric,
  kindOf,
  mayBeginDigit,
  nextPossibleDigit,
  readUnit,
  SEPARATOR,
  unit,
} from './spelt-characters';

/** Digits a card number has (ISO/IEC 7812). */
export const MIN_CARD_DIGITS = 12;
export const MAX_CARD_DIGITS = 19;
/** Digits of a group, other than the last, when a number is written in groups that are not uniform. */
const MIN_GROUP_DIGITS = 4;
/** Digits of each group (but the last, which may have fewer) when a number is written in uniform groups. */
const MAX_UNIFORM_GROUP_DIGITS = 2;

/** Whether `value` is a string of as many ASCII digits as a card number has (a network token's shape). */
export function isCardNumberLength(value: unknown): boolean {
  if (typeof value !== 'string' || value.length < MIN_CARD_DIGITS || value.length > MAX_CARD_DIGITS) return false;
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) < 0x30 || value.charCodeAt(i) > 0x39) return false;
  return true;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * The first six digits where the card schemes' truncation rules allow showing them beside the last
 * four (PCI SSC FAQ 1091: at least five digits hidden for 15-digit numbers, six for longer ones).
 * Under 15 digits, first six and last four would leave two to four digits hidden, which Luhn narrows
 * further: no BIN is kept or shown for such numbers.
 */
export function binOf(digits: string): string | null {
  return digits.length >= 15 ? digits.slice(0, 6) : null;
}

/** How many leading and trailing digits of an n-digit card number may be shown. */
function shown(n: number): { head: number; tail: number } {
  return { head: n >= 15 ? 6 : 0, tail: n >= 10 ? 4 : 0 };
}

/** A card number found in a text: where each of its digits is spelt, and the digits. */
interface FoundCardNumber {
  digits: string;
  /** [start, end) of each digit's spelling in the text. */
  spans: Array<readonly [number, number]>;
}

/**
 * A group of digits with nothing but invisible characters between them, [start, end) in the text. Plain
 * ASCII digits side by side are read from the text when needed; a group with any other spelling keeps its
 * digits and each one's [start, end).
 */
interface Group {
  start: number;
  end: number;
  count: number;
  spelt: { digits: string; spans: number[] } | null;
  /** The separators after it hold a comma or a semicolon: a list's, which uniform groups may not cross. */
  listed: boolean;
}

const digitsOf = (text: string, group: Group) => group.spelt?.digits ?? text.slice(group.start, group.end);

/** A UUID with a hex letter in it: an id (ours are UUIDs), not a card number written with dashes. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

const idCharacter = (c: number) => c === 0x2d || hexValue(c) >= 0;

/** Whether [start, end) lies wholly inside a UUID with a letter: read around it only, never the whole text. */
function insideId(text: string, start: number, end: number): boolean {
  // Digits between two characters that cannot be part of a UUID are not inside one: no number is a whole UUID.
  if (end - start > 36 || (!idCharacter(text.charCodeAt(start - 1)) && !idCharacter(text.charCodeAt(end))))
    return false;
  const from = Math.max(0, end - 36);
  const around = text.slice(from, start + 36);
  for (const m of around.matchAll(UUID)) {
    if (from + m.index <= start && end <= from + m.index + 36 && /[a-f]/i.test(m[0])) return true;
  }
  return false;
}

/** Lengths of hex ids: span ids, MongoDB object ids, trace ids and MD5, SHA-1, SHA-256. */
const HEX_ID_LENGTHS = new Set([16, 24, 32, 40, 64]);

/**
 * Whether plain digits [start, end) lie inside a hex id: hex letters right before and after them, in a run
 * of hex characters of a hex id's length with neither a letter nor a digit at either end. Reads 64
 * characters each side at most.
 */
function insideHexId(text: string, start: number, end: number): boolean {
  if (hexValue(text.charCodeAt(start - 1)) < 10 || hexValue(text.charCodeAt(end)) < 10) return false;
  let from = start;
  while (start - from < 64 && from > 0 && hexValue(text.charCodeAt(from - 1)) >= 0) from--;
  let to = end;
  while (to - end < 64 && hexValue(text.charCodeAt(to)) >= 0) to++;
  return (
    HEX_ID_LENGTHS.has(to - from) &&
    !isAsciiAlphanumeric(text.charCodeAt(from - 1)) &&
    !isAsciiAlphanumeric(text.charCodeAt(to))
  );
}

/**
 * Whether the digits at `start` are part of an IBAN with a numeric account part (`DE89 3704 0044 0532 0130
 * 00`): before them, digits and spaces only back to two capital letters at a word's start followed by two
 * digits (its country code and check digits). Reads 34 characters back at most, an IBAN's length.
 */
function insideIban(text: string, start: number): boolean {
  const c = (at: number) => text.charCodeAt(at);
  const digit = (at: number) => c(at) >= 0x30 && c(at) <= 0x39;
  const upper = (at: number) => c(at) >= 0x41 && c(at) <= 0x5a;
  let k = start;
  while (k > 0 && start - k < 34 && (digit(k - 1) || c(k - 1) === 0x20)) k--;
  return k >= 2 && upper(k - 2) && upper(k - 1) && digit(k) && digit(k + 1) && !isAsciiAlphanumeric(c(k - 3));
}

/**
 * Whether `digits` begin as a card network's numbers do (American Express, Diners, JCB 3; Visa 4; Mastercard
 * 51–55 and 2221–2720; Discover, UnionPay, Maestro 5 and 6): asked of numbers written across a list's commas,
 * where years (`[2019,2020,2021]`) and other lists of four-digit numbers begin with 1 or 2.
 */
function networkPrefix(digits: string): boolean {
  const first = digits.charCodeAt(0) - 0x30;
  if (first >= 3 && first <= 6) return true;
  const four = Number(digits.slice(0, 4));
  return four >= 2221 && four <= 2720;
}

/** Unix time in milliseconds of 2015-01-01 and 2035-01-01, as 13 digits: the range read as a timestamp. */
const TIMESTAMP_FROM = '1420070400000';
const TIMESTAMP_TO = '2051222400000';

/**
 * Whether a run of digits standing alone (one group, no separator) is an id rather than a card number: part
 * of a hex id (a trace id, a hash: `4bf92f3577b34da6a3ce929d0e0e4736`, see insideHexId), or a
 * Unix time in milliseconds, microseconds or nanoseconds from 2015 to 2034 (13, 16 or 19 digits from 142…
 * to 205…: no card is issued with those lengths and first digits — Visa's old 13-digit numbers begin with 4,
 * Mastercard's 2-series with 2221–2720, and industry identifier 1 is the airlines').
 */
function isIdRun(text: string, group: Group, digits: string): boolean {
  if (digits.length === 13 || digits.length === 16 || digits.length === 19) {
    const ms = digits.slice(0, 13);
    if (ms >= TIMESTAMP_FROM && ms < TIMESTAMP_TO) return true;
  }
  if (group.spelt !== null) return false;
  return insideHexId(text, group.start, group.end) || decimalFraction(text, group.start);
}

/**
 * Whether the digits at `start` are the fraction of a decimal number (`0.8444218515250481`,
 * `-3.189531083031903e-253`): right after a period that follows a digit. A float's 15–17 significant digits pass
 * Luhn one time in ten; masked, a JSON number would no longer be one. A card written across periods
 * (`4111.1111.1111.1111`) is groups, never this lone run.
 */
function decimalFraction(text: string, start: number): boolean {
  const before = text.charCodeAt(start - 2);
  return text.charCodeAt(start - 1) === 0x2e && before >= 0x30 && before <= 0x39;
}

/**
 * Whether two groups are a decimal number's integer part and fraction (`19114442871.64608`): plain digits either
 * side of one period. No card is written as two groups split by a period; 4-4-4-4 across periods is four.
 */
function decimalNumber(text: string, whole: Group, fraction: Group): boolean {
  return whole.spelt === null && fraction.spelt === null && fraction.start === whole.end + 1 && text[whole.end] === '.';
}

/**
 * Every card number in `text`, in order. Overlapping candidates (a run that holds more than one
 * Luhn-valid stretch) are all returned: masking all of them still shows at most six and four of each.
 *
 * The text is read unit by unit (a character or an escape), group by group. Groups joined by separators
 * wait in `pending` until no number starting at the first of them can grow (19 digits past its start have
 * been read), then that start is tried and dropped: at most 19 groups wait, whatever the text.
 */
export function findCardNumbers(text: string): FoundCardNumber[] {
  const found: FoundCardNumber[] = [];
  const pending: Group[] = [];
  let pendingDigits = 0;
  const tryFirst = () => {
    tryFrom(text, pending, found);
    pendingDigits -= pending[0].count;
    pending.shift();
  };
  const tryAll = () => {
    while (pending.length > 0) tryFirst();
    pendingDigits = 0;
  };
  // The group being read: where it starts (-1: none), its end and count, its spelling when not plain.
  let start = -1;
  let end = 0;
  let count = 0;
  let spelt: Group['spelt'] = null;
  /** The group being read has passed MAX_CARD_DIGITS: it belongs to no card number. */
  let overlong = false;
  /** Separators read after a group, not yet followed by a digit. */
  let separated = false;
  /** The group ends; `joined`: by a separator, so the next group may continue its number. */
  const endGroup = (joined: boolean) => {
    if (overlong) tryAll();
    else if (start >= 0 && (joined || pending.length > 0 || count >= MIN_CARD_DIGITS)) {
      pending.push({ start, end, count, spelt, listed: false });
      pendingDigits += count;
      if (!joined) tryAll();
      else while (pending.length > 0 && pendingDigits - pending[0].count >= MAX_CARD_DIGITS) tryFirst();
    }
    start = -1;
    count = 0;
    spelt = null;
    overlong = false;
  };
  const n = text.length;
  for (let i = 0; i < n;) {
    // Between groups, a character that cannot begin a digit changes nothing: skip to the next that can.
    if (start < 0 && !overlong && !separated && !mayBeginDigit(text.charCodeAt(i))) {
      i = nextPossibleDigit(text, i + 1);
      if (i >= n) break;
    }
    const c = text.charCodeAt(i);
    let value = c;
    let length = 1;
    // Most characters are none of the escapes: read in place.
    if (c === 0x5c || c === 0x25 || c === 0x26 || (c >= 0xc2 && c <= 0xf4) || (c >= 0xd800 && c <= 0xdbff)) {
      readUnit(text, i);
      value = unit.value;
      length = unit.length;
    }
    const kind = value < 0x80 ? ASCII_KINDS[value] : kindOf(value);
    if (kind === DIGIT) {
      separated = false;
      if (overlong) {
        // Still the same overlong group.
      } else if (count === MAX_CARD_DIGITS) {
        overlong = true;
      } else {
        if (start < 0) start = i;
        else if (spelt === null && i !== end) spelt = plainSpelling(text, start, end);
        if (spelt === null && (length > 1 || value > 0x39)) spelt = plainSpelling(text, start, i);
        if (spelt !== null) {
          spelt.digits += String.fromCharCode(0x30 + digitValue(value));
          spelt.spans.push(i, i + length);
        }
        count++;
        end = i + length;
      }
    } else if (kind === INVISIBLE) {
      // Read through: it neither ends a group nor separates two.
    } else if (kind === SEPARATOR) {
      if (!separated && (start >= 0 || overlong)) {
        separated = true;
        endGroup(true);
      }
      if (separated && (value === 0x2c || value === 0x3b) && pending.length > 0)
        pending[pending.length - 1].listed = true;
    } else if (start >= 0 || overlong || separated) {
      separated = false;
      endGroup(false);
      tryAll();
    }
    i += length;
  }
  endGroup(false);
  tryAll();
  return found;
}

/** The spelling of plain digits side by side, [start, end): each one character. */
function plainSpelling(text: string, start: number, end: number): NonNullable<Group['spelt']> {
  const spelt = { digits: text.slice(start, end), spans: [] as number[] };
  for (let k = start; k < end; k++) spelt.spans.push(k, k + 1);
  return spelt;
}

/**
 * The card numbers that start at the first of `groups`: whole groups, 12–19 digits, the first not 0, every
 * group but the last of four digits or more or every group but the last of one (or two) and the last no
 * longer, Luhn-valid, not an id.
 */
function tryFrom(text: string, groups: readonly Group[], found: FoundCardNumber[]): void {
  const first = groups[0].count;
  let digits = '';
  /** Every group before the h-th has four digits or more. */
  let fours = true;
  /** Every group before the h-th has as many as the first, which has one or two. */
  let uniform = first <= MAX_UNIFORM_GROUP_DIGITS;
  /** A comma or a semicolon joins two of the groups before the h-th. */
  let crossesList = false;
  /** Leading zeros of `digits`: padding, not part of the number. */
  let padding = 0;
  for (let h = 0; h < groups.length; h++) {
    if (h > 0) {
      const previous = groups[h - 1].count;
      if (previous < MIN_GROUP_DIGITS) fours = false;
      if (previous !== first || groups[h - 1].listed) uniform = false;
      if (groups[h - 1].listed) crossesList = true;
      if (!fours && !uniform) return;
    }
    if (digits.length - padding + groups[h].count > MAX_CARD_DIGITS) return;
    digits += digitsOf(text, groups[h]);
    // No card is issued under industry identifier 0 (ISO/IEC 7812): leading zeros are a fixed-width field's
    // padding (`0004111…`), and the number is what follows them; a run of zeros alone is none.
    while (padding < digits.length && digits.charCodeAt(padding) === 0x30) padding++;
    const number = padding === 0 ? digits : digits.slice(padding);
    if (number.length < MIN_CARD_DIGITS || (!fours && groups[h].count > first) || !luhnValid(number)) continue;
    if (h === 0 && isIdRun(text, groups[0], number)) continue;
    if (h === 1 && decimalNumber(text, groups[0], groups[1])) continue;
    if (crossesList && !networkPrefix(number)) continue;
    if (insideIban(text, groups[0].start)) return;
    if (insideId(text, groups[0].start, groups[h].end)) continue;
    const spans: Array<readonly [number, number]> = [];
    for (const group of groups.slice(0, h + 1)) {
      if (group.spelt === null) for (let k = group.start; k < group.end; k++) spans.push([k, k + 1]);
      else
        for (let k = 0; k < group.spelt.spans.length; k += 2)
          spans.push([group.spelt.spans[k], group.spelt.spans[k + 1]]);
    }
    found.push({ digits: number, spans: padding === 0 ? spans : spans.slice(padding) });
  }
}

/** Whether `text` holds a card number in any spelling. */
export function holdsCardNumber(text: string): boolean {
  return findCardNumbers(text).length > 0;
}

/**
 * `text` with every card number masked: the digits binOf and the last four do not show become `*`, each
 * replacing the whole spelling of its digit. With `bareJson`, a number standing alone as a JSON value
 * (`"x": 4111…`) becomes a string, so that the JSON stays JSON; anywhere else (inside a JSON string, in XML or
 * plain text, `[4111…]` included) the text keeps its shape and only digits change.
 */
export function maskCardNumbers(text: string, options: { bareJson?: boolean } = {}): string {
  const found = findCardNumbers(text);
  if (found.length === 0) return text;
  const json = options.bareJson === true ? jsonValues(text) : null;
  // Edits as [at, end, text], applied in order: a hidden digit's spelling becomes `*`, a quote goes in.
  const edits: Array<[number, number, string]> = [];
  for (const card of found) {
    const { head, tail } = shown(card.digits.length);
    const quote = json !== null && bareJsonNumber(text, card) && json(card.spans[0][0]);
    if (quote) edits.push([card.spans[0][0], card.spans[0][0], '"']);
    card.spans.forEach(([start, end], k) => {
      if (k >= head && k < card.spans.length - tail) edits.push([start, end, '*']);
    });
    if (quote) edits.push([card.spans.at(-1)![1], card.spans.at(-1)![1], '"']);
  }
  // Overlapping numbers hide some digits twice: each spelling is replaced once. A quote goes before the digit there.
  edits.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const parts: string[] = [];
  let at = 0;
  for (const [start, end, replacement] of edits) {
    if (start < at) continue;
    parts.push(text.slice(at, start), replacement);
    at = end;
  }
  parts.push(text.slice(at));
  return parts.join('');
}

/** Whether the card's digits are the whole of a plain JSON number value: `: 4111…,` or `[4111…]`. */
function bareJsonNumber(text: string, card: FoundCardNumber): boolean {
  const start = card.spans[0][0];
  const end = card.spans.at(-1)![1];
  if (end - start !== card.digits.length) return false;
  let before = start - 1;
  while (before >= 0 && /\s/.test(text[before])) before--;
  let after = end;
  while (after < text.length && /\s/.test(text[after])) after++;
  return before >= 0 && ':[,'.includes(text[before]) && (after === text.length || ',]}'.includes(text[after]));
}

/**
 * For a text that is JSON (it opens an object or an array: a body, a log line; an XML document or plain text does
 * not), whether a position stands among its values rather than inside one of its strings; null for any other text.
 * A JSON string holds no raw quote, so the quotes before a position (`\"` and whatever follows a backslash inside a
 * string aside) say whether a string is open there: read once for positions asked in order, again from the start
 * for one before the last.
 */
function jsonValues(text: string): ((at: number) => boolean) | null {
  if (!/^\s*[[{]/.test(text)) return null;
  let scanned = 0;
  let inString = false;
  return (at) => {
    if (at < scanned) [scanned, inString] = [0, false];
    for (; scanned < at; scanned++) {
      if (!inString) inString = text[scanned] === '"';
      else if (text[scanned] === '\\') scanned++;
      else if (text[scanned] === '"') inString = false;
    }
    return !inString;
  };
}
