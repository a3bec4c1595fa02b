/**
 * The corpus of card-number spellings every sink is tested with, and a reader of them written here from
 * the formats' own rules (JSON escapes, XML character references, percent-encoding applied any number of
 * times, Unicode's decimal digits and its format characters), independent of src/platform/card-data: whether a
 * text still reveals a card number is judged by this file alone.
 */

/** Luhn-valid test numbers of each length and scheme family (12 to 19 digits). */
export const TEST_PANS = [
  '4111111111111111', // Visa, 16
  '5555555555554444', // Mastercard, 16
  '378282246310005', // Amex, 15
  '6011000990139424', // Discover, 16
  '6212345678901234569', // UnionPay, 19
  '30569309025904', // Diners, 14
  '2223003122003222', // Mastercard 2-series, 16
  '501800000009', // Maestro, 12
] as const;

/** Groups as a card is printed: 4-6-5 for 15 digits, 4-6-4 for 14, fours otherwise. */
function grouped(pan: string): string[] {
  if (pan.length === 15) return [pan.slice(0, 4), pan.slice(4, 10), pan.slice(10)];
  if (pan.length === 14) return [pan.slice(0, 4), pan.slice(4, 10), pan.slice(10)];
  return pan.match(/.{1,4}/g)!;
}

const each = (pan: string, spell: (digit: string) => string) => [...pan].map(spell).join('');
const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(4, '0');
/** The digit `d` in the script whose zero is `zero` (a code point; astral ones too). */
const script = (zero: number) => (d: string) => String.fromCodePoint(zero + Number(d));
/** A string's UTF-8 bytes, each as `%XX`. */
const percentUtf8 = (c: string) => [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
/** Each UTF-16 code unit of `c` as a JSON `\uXXXX` escape (a surrogate pair as two). */
const jsonUnits = (c: string) =>
  Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
/** The groups joined by each of `separators` in turn. */
const mixed = (groups: string[], separators: string[]) =>
  groups.reduce((out, g, i) => (i === 0 ? g : `${out}${separators[(i - 1) % separators.length]}${g}`), '');

/** Every spelling of `pan` the detector must see, named. */
export function spellings(pan: string): Array<{ name: string; text: string }> {
  const groups = grouped(pan);
  const digits = [...pan];
  const pairs = pan.match(/.{1,2}/g)!;
  return [
    { name: 'plain', text: pan },
    { name: 'spaces', text: groups.join(' ') },
    { name: 'dashes', text: groups.join('-') },
    { name: 'dots', text: groups.join('.') },
    { name: 'plus (form)', text: groups.join('+') },
    { name: '%20', text: groups.join('%20') },
    { name: 'tabs', text: groups.join('\t') },
    { name: 'no-break spaces', text: groups.join('\u00a0') },
    { name: 'Unicode hyphens', text: groups.join('\u2010') },
    { name: 'JSON \\u escapes', text: each(pan, (d) => `\\u${hex(d)}`) },
    { name: 'JSON \\u escapes, some', text: each(pan, (d) => (d === '1' ? `\\u${hex(d)}` : d)) },
    { name: 'JSON \\u0020 separators', text: groups.join('\\u0020') },
    { name: 'XML decimal references', text: each(pan, (d) => `&#${d.charCodeAt(0)};`) },
    { name: 'XML hex references', text: each(pan, (d) => `&#x${d.charCodeAt(0).toString(16)};`) },
    { name: 'XML references, leading zeros', text: each(pan, (d) => `&#000${d.charCodeAt(0)};`) },
    { name: 'XML &#32; separators', text: groups.join('&#32;') },
    { name: 'percent-encoded digits', text: each(pan, (d) => `%${d.charCodeAt(0).toString(16)}`) },
    { name: 'fullwidth digits', text: each(pan, (d) => String.fromCharCode(0xff10 + Number(d))) },
    // Separators of every kind, runs of them, and several in one number (issue 45).
    { name: 'newlines', text: groups.join('\n') },
    { name: 'CRLF', text: groups.join('\r\n') },
    { name: 'two spaces', text: groups.join('  ') },
    { name: 'spaced dashes', text: groups.join(' - ') },
    { name: 'slashes', text: groups.join('/') },
    { name: 'underscores', text: groups.join('_') },
    { name: 'commas', text: groups.join(',') },
    { name: 'colons', text: groups.join(':') },
    { name: 'thin spaces', text: groups.join('\u2009') },
    { name: 'ideographic spaces', text: groups.join('\u3000') },
    { name: 'en dashes', text: groups.join('\u2013') },
    { name: 'mixed separators', text: mixed(groups, [' ', '-', '/', '\u2009']) },
    { name: 'mixed runs of separators', text: mixed(groups, [' -- ', ' / ', '\t\n', ' . ']) },
    { name: 'every digit spaced', text: digits.join(' ') },
    { name: 'pairs', text: pairs.join(' ') },
    // Invisible characters (Unicode Cf, combining marks) between digits: a reader's eye skips them.
    { name: 'zero-width spaces between digits', text: digits.join('\u200b') },
    { name: 'soft hyphens between digits', text: digits.join('\u00ad') },
    { name: 'word joiners between digits', text: digits.join('\u2060') },
    {
      name: 'ZWJ, ZWNJ and BOM in groups, spaces between',
      text: groups.map((g) => [...g].join('\u200d\u200c\ufeff')).join(' '),
    },
    { name: 'keycap digits', text: each(pan, (d) => `${d}\ufe0f\u20e3`) },
    // Other digit scripts.
    { name: 'Arabic-Indic digits', text: each(pan, script(0x660)) },
    { name: 'Persian digits, spaced', text: groups.map((g) => each(g, script(0x6f0))).join(' ') },
    { name: 'Devanagari digits', text: each(pan, script(0x966)) },
    { name: 'Thai digits', text: each(pan, script(0xe50)) },
    { name: 'mathematical bold digits', text: each(pan, script(0x1d7ce)) },
    { name: 'mathematical monospace digits, dashed', text: groups.map((g) => each(g, script(0x1d7f6))).join('-') },
    // Escapes: repeated percent-encoding, percent-encoded UTF-8, escaped separators, surrogate pairs.
    { name: 'percent-encoded slashes', text: groups.join('%2F') },
    { name: 'double percent-encoding', text: each(pan, (d) => `%25${d.charCodeAt(0).toString(16)}`) },
    { name: 'triple percent-encoding', text: each(pan, (d) => `%2525${d.charCodeAt(0).toString(16)}`) },
    { name: 'double-encoded %2520 separators', text: groups.join('%2520') },
    {
      name: 'percent-encoded UTF-8 fullwidth digits',
      text: each(pan, (d) => percentUtf8(String.fromCharCode(0xff10 + Number(d)))),
    },
    {
      name: 'JSON surrogate pairs of mathematical digits',
      text: each(pan, (d) => jsonUnits(String.fromCodePoint(0x1d7ce + Number(d)))),
    },
    { name: 'double-escaped JSON \\\\u', text: each(pan, (d) => `\\\\u${hex(d)}`) },
    { name: 'JSON \\n separators', text: groups.join('\\n') },
    { name: 'HTML &nbsp; separators', text: groups.join('&nbsp;') },
  ];
}

/** Every (pan, spelling) pair: 8 numbers × 53 spellings. */
export const CORPUS = TEST_PANS.flatMap((pan) => spellings(pan).map((s) => ({ pan, ...s })));

/** A decimal digit's value, from Unicode's own rule (its digits come in runs of ten, 0 first), via \p{Nd}. */
const ND = /^\p{Nd}$/u;
const digitValues = new Map<number, number>();
function ndValue(cp: number): number {
  let value = digitValues.get(cp);
  if (value === undefined) {
    let run = 0;
    while (ND.test(String.fromCodePoint(cp - run - 1))) run++;
    value = run % 10;
    digitValues.set(cp, value);
  }
  return value;
}

/** Percent escapes decoded once: runs of them as UTF-8 where they are, else each byte as a Latin-1 character. */
function percentDecoded(text: string): string {
  return text
    .replace(/%u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
      }
    });
}

/** One pass over every escape this file knows. */
function unescapedOnce(text: string): string {
  return percentDecoded(text)
    .replace(/\\+u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\+x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\+[nrtbf/]/g, ' ')
    .replace(/&#x([0-9a-fA-F]+);/g, (_, h: string) => String.fromCodePoint(Math.min(parseInt(h, 16), 0x10ffff)))
    .replace(/&#([0-9]+);/g, (_, d: string) => String.fromCodePoint(Math.min(Number(d), 0x10ffff)))
    .replace(/&[a-zA-Z][a-zA-Z0-9]*;/g, ' ');
}

/** The text with every spelling this file knows turned back into plain characters, every digit ASCII. */
export function unspelt(text: string): string {
  let out = text;
  // Escapes of escapes (`%2534`, `\\u0034`): decoded until nothing changes.
  for (let pass = 0; pass < 8; pass++) {
    const next = unescapedOnce(out);
    if (next === out) break;
    out = next;
  }
  return out.replace(/\p{Nd}/gu, (c) => String(ndValue(c.codePointAt(0)!)));
}

/** Whether `text` still holds `pan` whole, in any spelling this file knows (separators and invisibles dropped). */
export function reveals(text: string, pan: string): boolean {
  return unspelt(text)
    .replace(/[\p{Z}\p{P}\p{Cc}\p{Cf}\p{Mn}\p{Me}+=|~^`$<>]/gu, '')
    .includes(pan);
}

/** How many of `pan`'s digits a masked form shows: the digits left where the number was. */
export function shownDigits(text: string): number {
  return unspelt(text).replace(/[^0-9]/g, '').length;
}

/** Field names a card's security code goes by in payment APIs, in the spellings they use (decision 0113). */
export const SECURITY_CODE_SPELLINGS = [
  'cvv',
  'CVV',
  'cvc',
  'cvv2',
  'cvc2',
  'CVC2',
  'cid',
  'csc',
  'cvn',
  'cvd',
  'security_code',
  'securityCode',
  'Security-Code',
  'card_verification_value',
  'cardVerificationValue',
  'cardCode',
  'card_code',
  'verification_value',
  'cvv_number',
  'encryptedSecurityCode',
] as const;

/** `text` as what rests of an answer shows it (decision 0113): each filled value the target echoed withheld. */
export function asKept(text: string, ...filled: string[]): string {
  return filled.reduce((out, value) => out.split(value).join('[Redacted]'), text);
}
