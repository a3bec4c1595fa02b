/**
 * The one card-number detector (decision 0112). Every place that keeps or shows data the service did not
 * write itself — record bodies and URLs, log lines, span attributes, stored job answers, an answer's
 * unmatched_pan — finds card numbers here, and nowhere else.
 *
 * A card number is 12 to 19 digits passing the Luhn check, in any of the spellings people and machines
 * write it in:
 * - plain ASCII digits, or fullwidth ones (U+FF10–U+FF19);
 * - digits spelt as a JSON `\u00XX` escape, an XML/HTML numeric or hex character reference (`&#52;`,
 *   `&#x34;`) or a percent escape (`%34`);
 * - groups of digits joined by one separator each: space, tab, no-break space, dash (ASCII or Unicode),
 *   dot, `+` (form encoding), or any of those escaped as above (`%20`, `\u0020`, `&#32;`). Every group but
 *   the last has at least four digits, which is how card numbers are printed (4-4-4-4, 4-6-5, 4-4-4-4-3)
 *   and what dates, IP addresses and phone numbers are not;
 * - UTF-16 text (LE or BE, by charset, byte-order mark or shape): decoded, searched and encoded back;
 *   UTF-8 text searched as Latin-1 (one character a byte), its multi-byte characters read whole.
 * A run of digits with no separator counts only whole: 20 digits in a row are an id, not a card number
 * with a digit more. Digit runs wholly inside a UUID are ids too (one random UUID in a few dozen holds a
 * Luhn-valid run across its dashes).
 *
 * A card number found is masked (PCI DSS 3.4) as binOf allows: the first six and last four digits kept
 * from 15 digits on, the last four only below; every other digit becomes `*`, whatever its spelling, and
 * nothing else in the text changes. Linear in the text: each character is read once, and each group of
 * digits is tried as the start of at most 19 digits' worth of groups.
 */

/** Digits a card number has (ISO/IEC 7812). */
export const MIN_CARD_DIGITS = 12;
export const MAX_CARD_DIGITS = 19;
/** Digits of a group, other than the last, when a number is written in groups. */
const MIN_GROUP_DIGITS = 4;

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

const SEPARATORS = new Set([0x20, 0x09, 0xa0, 0x2d, 0x2e, 0x2b, 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2212]);

const hexValue = (c: number) =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;

/**
 * The character the text spells at `i` and how many code units spell it: itself, or a JSON `\uXXXX`
 * escape, an `&#…;` / `&#x…;` reference, a `%XX` escape. Found in `unit` (value, length) to avoid an
 * object per character.
 */
const unit = { value: 0, length: 1 };
function readUnit(text: string, i: number): void {
  const c = text.charCodeAt(i);
  unit.value = c;
  unit.length = 1;
  if (c === 0x5c /* \ */) {
    if (text.charCodeAt(i + 1) !== 0x75 /* u */) return;
    let value = 0;
    for (let k = 2; k < 6; k++) {
      const h = hexValue(text.charCodeAt(i + k));
      if (h < 0) return;
      value = value * 16 + h;
    }
    unit.value = value;
    unit.length = 6;
  } else if (c === 0x25 /* % */) {
    const hi = hexValue(text.charCodeAt(i + 1));
    const lo = hexValue(text.charCodeAt(i + 2));
    if (hi < 0 || lo < 0) return;
    unit.value = hi * 16 + lo;
    unit.length = 3;
  } else if (c === 0x26 /* & */ && text.charCodeAt(i + 1) === 0x23 /* # */) {
    const hex = (text.charCodeAt(i + 2) | 0x20) === 0x78; /* x or X */
    let k = i + (hex ? 3 : 2);
    const first = k;
    let value = 0;
    // Eight digits at most: leading zeros are allowed, a longer reference is not a character.
    while (k - first < 8) {
      const d = hex ? hexValue(text.charCodeAt(k)) : text.charCodeAt(k) - 0x30;
      if (d < 0 || d > (hex ? 15 : 9)) break;
      value = value * (hex ? 16 : 10) + d;
      k++;
    }
    if (k === first || text.charCodeAt(k) !== 0x3b /* ; */) return;
    unit.value = value;
    unit.length = k + 1 - i;
  } else if (c >= 0xc2 && c <= 0xef) {
    // UTF-8 read one byte a character (bodies are searched as Latin-1, byte for byte): a no-break space,
    // a Unicode dash or a fullwidth digit is two or three such characters.
    const trail = c >= 0xe0 ? 2 : 1;
    let value = c & (trail === 2 ? 0x0f : 0x1f);
    for (let k = 1; k <= trail; k++) {
      const next = text.charCodeAt(i + k);
      if (next < 0x80 || next > 0xbf) return;
      value = (value << 6) | (next & 0x3f);
    }
    unit.value = value;
    unit.length = trail + 1;
  }
}

const digitOf = (value: number) =>
  value >= 0x30 && value <= 0x39 ? value - 0x30 : value >= 0xff10 && value <= 0xff19 ? value - 0xff10 : -1;

/**
 * Whether a character can begin a digit's spelling (digitOf of itself, or of what readUnit reads from
 * it): an ASCII or fullwidth digit, an escape's first character, or a UTF-8 lead byte read as Latin-1.
 */
const mayBeginDigit = (c: number) =>
  (c >= 0x30 && c <= 0x39) ||
  c === 0x5c ||
  c === 0x25 ||
  c === 0x26 ||
  (c >= 0xc2 && c <= 0xef) ||
  (c >= 0xff10 && c <= 0xff19);
/** The same set as mayBeginDigit, for long stretches without one (the regular expression engine scans faster). */
const POSSIBLE_DIGIT = /[0-9\\%&\u00c2-\u00ef\uff10-\uff19]/g;
/** Characters looked at one by one before a stretch is handed to POSSIBLE_DIGIT: short gaps stay in the loop. */
const SHORT_GAP = 32;

/** The index of the first character from `from` on that may begin a digit, or text.length. */
function nextPossibleDigit(text: string, from: number): number {
  const stop = Math.min(text.length, from + SHORT_GAP);
  for (let i = from; i < stop; i++) if (mayBeginDigit(text.charCodeAt(i))) return i;
  if (stop === text.length) return stop;
  POSSIBLE_DIGIT.lastIndex = stop;
  return POSSIBLE_DIGIT.test(text) ? POSSIBLE_DIGIT.lastIndex - 1 : text.length;
}

/** A card number found in a text: where each of its digits is spelt, and the digits. */
interface FoundCardNumber {
  digits: string;
  /** [start, end) of each digit's spelling in the text. */
  spans: Array<readonly [number, number]>;
}

/**
 * A group of digits with nothing between them, [start, end) in the text. Plain ASCII digits are read from
 * the text when needed; a group with any other spelling keeps its digits and each one's [start, end).
 */
interface Group {
  start: number;
  end: number;
  count: number;
  spelt: { digits: string; spans: number[] } | null;
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

/**
 * Every card number in `text`, in order. Overlapping candidates (a run that holds more than one
 * Luhn-valid stretch) are all returned: masking all of them still shows at most six and four of each.
 *
 * The text is read group by group. Groups joined by single separators wait in `pending` until no
 * number starting at the first of them can grow (19 digits past its start have been read), then that
 * start is tried and dropped: at most 19 groups wait, whatever the text.
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
  /** A separator read after a group, not yet followed by a digit. */
  let separated = false;
  /** The group ends; `joined`: by a separator, so the next group may continue its number. */
  const endGroup = (joined: boolean) => {
    if (overlong) tryAll();
    else if (start >= 0 && (joined || pending.length > 0 || count >= MIN_CARD_DIGITS)) {
      pending.push({ start, end, count, spelt });
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
    if (c === 0x5c || c === 0x25 || c === 0x26 || (c >= 0xc2 && c <= 0xef)) {
      readUnit(text, i);
      value = unit.value;
      length = unit.length;
    }
    const digit = digitOf(value);
    if (digit >= 0) {
      separated = false;
      if (overlong) {
        // Still the same overlong group.
      } else if (count === MAX_CARD_DIGITS) {
        overlong = true;
      } else {
        if (start < 0) start = i;
        if (spelt === null && (length > 1 || value > 0x39)) {
          // The first digit not written plainly: the group's digits and spans are kept from here on.
          spelt = { digits: text.slice(start, i), spans: [] };
          for (let k = start; k < i; k++) spelt.spans.push(k, k + 1);
        }
        if (spelt !== null) {
          spelt.digits += String.fromCharCode(0x30 + digit);
          spelt.spans.push(i, i + length);
        }
        count++;
        end = i + length;
      }
    } else if (!separated && (start >= 0 || overlong) && SEPARATORS.has(value)) {
      separated = true;
      endGroup(true);
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

/**
 * The card numbers that start at the first of `groups`: whole groups, 12–19 digits, every group but the
 * last of four digits or more, Luhn-valid.
 */
function tryFrom(text: string, groups: readonly Group[], found: FoundCardNumber[]): void {
  let digits = '';
  for (let h = 0; h < groups.length; h++) {
    if (h > 0 && groups[h - 1].count < MIN_GROUP_DIGITS) return;
    if (digits.length + groups[h].count > MAX_CARD_DIGITS) return;
    digits += digitsOf(text, groups[h]);
    if (digits.length < MIN_CARD_DIGITS || !luhnValid(digits)) continue;
    if (insideId(text, groups[0].start, groups[h].end)) continue;
    const spans: Array<readonly [number, number]> = [];
    for (const group of groups.slice(0, h + 1)) {
      if (group.spelt === null) for (let k = group.start; k < group.end; k++) spans.push([k, k + 1]);
      else
        for (let k = 0; k < group.spelt.spans.length; k += 2)
          spans.push([group.spelt.spans[k], group.spelt.spans[k + 1]]);
    }
    found.push({ digits, spans });
  }
}

/** Whether `text` holds a card number in any spelling. */
export function holdsCardNumber(text: string): boolean {
  return findCardNumbers(text).length > 0;
}

/**
 * `text` with every card number masked: the digits binOf and the last four do not show become `*`, each
 * replacing the whole spelling of its digit. With `bareJson`, a number standing alone as a JSON value
 * (`"x": 4111…`) becomes a string, so that the JSON stays JSON.
 */
export function maskCardNumbers(text: string, options: { bareJson?: boolean } = {}): string {
  const found = findCardNumbers(text);
  if (found.length === 0) return text;
  // Edits as [at, end, text], applied in order: a hidden digit's spelling becomes `*`, a quote goes in.
  const edits: Array<[number, number, string]> = [];
  for (const card of found) {
    const { head, tail } = shown(card.digits.length);
    const quote = options.bareJson === true && bareJsonNumber(text, card);
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

/** How a body's bytes are text: UTF-16 (either order) when its charset, byte-order mark or shape says so. */
export function textEncodingOf(bytes: Buffer, contentType?: string | null): 'utf16le' | 'utf16be' | 'latin1' {
  const charset = /charset\s*=\s*"?([\w-]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset === 'utf-16le') return 'utf16le';
  if (charset === 'utf-16be') return 'utf16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf16be';
  if (charset === 'utf-16') return 'utf16be';
  // No label: ASCII text in UTF-16 has a NUL in every other byte; UTF-8 and Latin-1 text has next to none.
  const sample = Math.min(bytes.length, 512) & ~1;
  if (sample < 8) return 'latin1';
  let even = 0;
  let odd = 0;
  for (let i = 0; i < sample; i += 2) {
    if (bytes[i] === 0) even++;
    if (bytes[i + 1] === 0) odd++;
  }
  if (odd * 4 >= sample && even * 16 < sample) return 'utf16le';
  if (even * 4 >= sample && odd * 16 < sample) return 'utf16be';
  return 'latin1';
}

/** Bytes as text in `encoding` (see textEncodingOf) and back: Latin-1 keeps every byte as it is. */
export function decodeText(bytes: Buffer, encoding: 'utf16le' | 'utf16be' | 'latin1'): string {
  if (encoding !== 'utf16be') return bytes.toString(encoding);
  return Buffer.from(bytes.subarray(0, bytes.length & ~1))
    .swap16()
    .toString('utf16le');
}

export function encodeText(text: string, encoding: 'utf16le' | 'utf16be' | 'latin1'): Buffer {
  const bytes = Buffer.from(text, encoding === 'utf16be' ? 'utf16le' : encoding);
  return encoding === 'utf16be' ? bytes.swap16() : bytes;
}
