/**
 * How the card-number detector (card-numbers.ts) reads a text unit by unit: every Unicode decimal digit
 * with its value, what each character is to it (digit, invisible, separator, word), and the escapes a
 * digit or a separator may be spelt in (JSON, percent-encoding to any depth, HTML/XML references, UTF-8
 * bytes read as Latin-1). Decision 0135.
 */
/**
 * The zero of every run of Unicode decimal digits (\p{Nd}, Unicode 17): Unicode puts them in runs of ten,
 * 0 to 9 in order (its stability policy), so a digit's value is its distance from the zero before it.
 * test/unit/card-detector.spec.ts checks this table against /\p{Nd}/u over every code point.
 */
export const DIGIT_ZEROS: readonly number[] = [
  0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xde6, 0xe50, 0xed0, 0xf20,
  0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90, 0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0,
  0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10, 0x104a0, 0x10d30, 0x10d40, 0x11066, 0x110f0, 0x11136, 0x111d0,
  0x112f0, 0x11450, 0x114d0, 0x11650, 0x116c0, 0x116d0, 0x116da, 0x11730, 0x118e0, 0x11950, 0x11bf0, 0x11c50, 0x11d50,
  0x11da0, 0x11de0, 0x11f50, 0x16130, 0x16a60, 0x16ac0, 0x16b50, 0x16d70, 0x1ccf0, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec,
  0x1d7f6, 0x1e140, 0x1e2f0, 0x1e4f0, 0x1e5f1, 0x1e950, 0x1fbf0,
];

/** The value (0–9) of the decimal digit at code point `cp`, or -1 when it is none. */
export function digitValue(cp: number): number {
  if (cp < 0x80) return cp >= 0x30 && cp <= 0x39 ? cp - 0x30 : -1;
  let lo = 0;
  let hi = DIGIT_ZEROS.length - 1;
  // The last zero at or below cp.
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (DIGIT_ZEROS[mid] <= cp) lo = mid;
    else hi = mid - 1;
  }
  const zero = DIGIT_ZEROS[lo];
  return cp >= zero && cp < zero + 10 ? cp - zero : -1;
}

/** What a character is to the detector. */
export const DIGIT = 1;
/** Format characters (Cf) and combining marks (Mn, Me): read through, as a reader's eye does. */
export const INVISIBLE = 2;
/** Neither a letter, a digit nor invisible: spaces, dashes, punctuation, symbols, controls. */
export const SEPARATOR = 3;
/** Letters, other numbers (²,½), spacing marks, private use, unassigned code points, lone surrogates. */
const WORD = 4;

const INVISIBLE_CHARACTER = /^[\p{Cf}\p{Mn}\p{Me}]$/u;
const SEPARATOR_CHARACTER = /^[\p{Z}\p{P}\p{S}\p{Cc}]$/u;
/** Each code point's kind, found once (a regular expression) and kept: 0 until then. */
const KINDS = new Uint8Array(0x110000);

export function kindOf(cp: number): number {
  let kind = KINDS[cp];
  if (kind === 0) {
    const c = String.fromCodePoint(cp);
    kind =
      digitValue(cp) >= 0
        ? DIGIT
        : INVISIBLE_CHARACTER.test(c)
          ? INVISIBLE
          : SEPARATOR_CHARACTER.test(c)
            ? SEPARATOR
            : WORD;
    KINDS[cp] = kind;
  }
  return kind;
}

export const hexValue = (c: number) =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;

/** The value of the `count` hex digits at `i`, or -1. */
function hexAt(text: string, i: number, count: number): number {
  let value = 0;
  for (let k = 0; k < count; k++) {
    const h = hexValue(text.charCodeAt(i + k));
    if (h < 0) return -1;
    value = value * 16 + h;
  }
  return value;
}

/** JSON's one-letter escapes (`\n`, `\t`, `\/` …): what each stands for. */
const JSON_ESCAPES: Record<number, number> = {
  0x6e: 0x0a, // n
  0x72: 0x0d, // r
  0x74: 0x09, // t
  0x62: 0x08, // b
  0x66: 0x0c, // f
  0x2f: 0x2f, // /
  0x22: 0x22, // "
  0x27: 0x27, // '
};

/**
 * HTML named references that are invisible (a soft hyphen, joiners); every other name (`&nbsp;`, `&ndash;`,
 * `&sol;`, `&amp;` …) is read as a separator, which a letter's name (`&eacute;`) is not — a few more groups
 * joined, never one missed.
 */
const INVISIBLE_NAMES = new Set(['shy', 'zwnj', 'zwj', 'zerowidthspace', 'nobreak', 'lrm', 'rlm', 'wj']);

/**
 * The character the text spells at `i` and how many code units spell it: itself (a surrogate pair read
 * whole), or an escape (see the file's comment). Found in `unit` (value, length) to avoid an object per
 * character. Each escape reads a bounded stretch, but for a run of backslashes or of `%25`, which it
 * consumes whole: every character is read a bounded number of times.
 */
export const unit = { value: 0, length: 1 };
export function readUnit(text: string, i: number): void {
  const c = text.charCodeAt(i);
  unit.value = c;
  unit.length = 1;
  if (c === 0x5c /* \ */) readBackslash(text, i);
  else if (c === 0x25 /* % */) readPercent(text, i);
  else if (c === 0x26 /* & */) readReference(text, i);
  else if (c >= 0xd800 && c <= 0xdbff) {
    const low = text.charCodeAt(i + 1);
    if (low >= 0xdc00 && low <= 0xdfff) {
      unit.value = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
      unit.length = 2;
    }
  } else if (c >= 0xc2 && c <= 0xf4) readUtf8(text, i, c);
}

/** `\uXXXX` (a surrogate pair as two), `\xXX`, `\n` and the like, after any number of backslashes. */
function readBackslash(text: string, i: number): void {
  let k = i + 1;
  while (text.charCodeAt(k) === 0x5c) k++;
  const next = text.charCodeAt(k);
  if (next === 0x75 /* u */) {
    const value = hexAt(text, k + 1, 4);
    if (value >= 0) {
      unit.value = value;
      unit.length = k + 5 - i;
      if (value >= 0xd800 && value <= 0xdbff) {
        // A surrogate pair spelt as two escapes: `\uD835\uDFCE`.
        let m = k + 5;
        while (text.charCodeAt(m) === 0x5c && m - (k + 5) < k + 1 - i) m++;
        const low = m > k + 5 && text.charCodeAt(m) === 0x75 ? hexAt(text, m + 1, 4) : -1;
        if (low >= 0xdc00 && low <= 0xdfff) {
          unit.value = 0x10000 + ((value - 0xd800) << 10) + (low - 0xdc00);
          unit.length = m + 5 - i;
        }
      }
      return;
    }
  } else if (next === 0x78 /* x */) {
    const value = hexAt(text, k + 1, 2);
    if (value >= 0) {
      unit.value = value;
      unit.length = k + 3 - i;
      return;
    }
  } else if (JSON_ESCAPES[next] !== undefined) {
    unit.value = JSON_ESCAPES[next];
    unit.length = k + 1 - i;
    return;
  }
  // Backslashes escaping nothing: one separator, the run read once.
  unit.value = 0x5c;
  unit.length = k - i;
}

/** Where a percent escape ends and the byte it stands for (`%2534` = `%34` = 4), in `percent`; -1: none. */
const percent = { value: -1, end: 0 };
function readPercentByte(text: string, i: number): void {
  percent.value = -1;
  if (text.charCodeAt(i) !== 0x25) return;
  let value = hexAt(text, i + 1, 2);
  if (value < 0) return;
  let end = i + 3;
  // Encoded again: `%25` followed by two hex digits is itself an escape, any number of times.
  while (value === 0x25) {
    const again = hexAt(text, end, 2);
    if (again < 0) break;
    value = again;
    end += 2;
  }
  percent.value = value;
  percent.end = end;
}

/** A percent escape: a byte, `%uXXXX`, or the bytes of one UTF-8 character. */
function readPercent(text: string, i: number): void {
  if ((text.charCodeAt(i + 1) | 0x20) === 0x75 /* u */) {
    const value = hexAt(text, i + 2, 4);
    if (value >= 0) {
      unit.value = value;
      unit.length = 6;
      return;
    }
  }
  readPercentByte(text, i);
  if (percent.value < 0) return;
  const lead = percent.value;
  unit.value = lead;
  unit.length = percent.end - i;
  if (lead < 0xc2 || lead > 0xf4) return;
  const trail = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : 1;
  let value = lead & (trail === 3 ? 0x07 : trail === 2 ? 0x0f : 0x1f);
  let end = percent.end;
  for (let k = 0; k < trail; k++) {
    readPercentByte(text, end);
    if (percent.value < 0x80 || percent.value > 0xbf) return;
    value = (value << 6) | (percent.value & 0x3f);
    end = percent.end;
  }
  if (!wellFormed(value, trail)) return;
  unit.value = value;
  unit.length = end - i;
}

/** Whether a UTF-8 sequence of `trail` continuation bytes decoding to `value` is its shortest, a scalar. */
export const wellFormed = (value: number, trail: number) =>
  value >= (trail === 1 ? 0x80 : trail === 2 ? 0x800 : 0x10000) &&
  value <= 0x10ffff &&
  (value < 0xd800 || value > 0xdfff);

/** `&#…;`, `&#x…;` or `&name;`. */
function readReference(text: string, i: number): void {
  if (text.charCodeAt(i + 1) === 0x23 /* # */) {
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
    if (k === first || text.charCodeAt(k) !== 0x3b /* ; */ || value > 0x10ffff) return;
    unit.value = value;
    unit.length = k + 1 - i;
    return;
  }
  // A named reference: letters and digits, then `;`, 32 characters at most.
  let k = i + 1;
  while (k - i <= 32 && isAsciiAlphanumeric(text.charCodeAt(k))) k++;
  if (k === i + 1 || text.charCodeAt(k) !== 0x3b) return;
  unit.value = INVISIBLE_NAMES.has(text.slice(i + 1, k).toLowerCase()) ? 0x200b : 0x20;
  unit.length = k + 1 - i;
}

export const isAsciiAlphanumeric = (c: number) =>
  (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);

/** UTF-8 bytes read one a character (a body searched as Latin-1): a lead byte and its continuation bytes. */
function readUtf8(text: string, i: number, lead: number): void {
  const trail = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : 1;
  let value = lead & (trail === 3 ? 0x07 : trail === 2 ? 0x0f : 0x1f);
  for (let k = 1; k <= trail; k++) {
    const next = text.charCodeAt(i + k);
    if (next < 0x80 || next > 0xbf) return;
    value = (value << 6) | (next & 0x3f);
  }
  if (!wellFormed(value, trail)) return;
  unit.value = value;
  unit.length = trail + 1;
}

/**
 * The kind of each ASCII character: digits, letters, and separators (every other, controls too) but `*`,
 * the mask's own character, which joins nothing: a masked number (`411111******1111`) is not read again as
 * groups that could make another with the digits around it.
 */
export const ASCII_KINDS = new Uint8Array(0x80).map((_, c) =>
  c >= 0x30 && c <= 0x39 ? DIGIT : isAsciiAlphanumeric(c) || c === 0x2a ? WORD : SEPARATOR,
);

/** Whether a code unit may begin a unit that is a digit: a digit, an escape's first character, a lead byte. */
export const mayBeginDigit = (c: number) =>
  c < 0x80
    ? (c >= 0x30 && c <= 0x39) || c === 0x5c || c === 0x25 || c === 0x26
    : (c >= 0xc2 && c <= 0xf4) || (c >= 0xd800 && c <= 0xdbff) || kindOf(c) === DIGIT;
/** What mayBeginDigit accepts (but high surrogates of other than digits), for long stretches without one. */
const POSSIBLE_DIGIT = /[\p{Nd}\\%&\u00c2-\u00f4\ud800-\udbff]/gu;
/** Characters looked at one by one before a stretch is handed to POSSIBLE_DIGIT: short gaps stay in the loop. */
const SHORT_GAP = 32;

/** The index of the first character from `from` on that may begin a digit, or text.length. */
export function nextPossibleDigit(text: string, from: number): number {
  const stop = Math.min(text.length, from + SHORT_GAP);
  for (let i = from; i < stop; i++) if (mayBeginDigit(text.charCodeAt(i))) return i;
  if (stop === text.length) return stop;
  POSSIBLE_DIGIT.lastIndex = stop;
  const m = POSSIBLE_DIGIT.exec(text);
  return m === null ? text.length : m.index;
}
