/**
 * The corpus of card-number spellings every sink is tested with, and a reader of them written here from
 * the formats' own rules (JSON escapes, XML character references, percent-encoding, fullwidth forms),
 * independent of src/platform/card-data: whether a text still reveals a card number is judged by this file alone.
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

/** Every spelling of `pan` the detector must see, named. */
export function spellings(pan: string): Array<{ name: string; text: string }> {
  const groups = grouped(pan);
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
  ];
}

/** Every (pan, spelling) pair: 8 numbers × 18 spellings. */
export const CORPUS = TEST_PANS.flatMap((pan) => spellings(pan).map((s) => ({ pan, ...s })));

/** The text with every spelling this file knows turned back into plain characters. */
export function unspelt(text: string): string {
  return text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/&#x([0-9a-fA-F]+);/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/&#([0-9]+);/g, (_, d: string) => String.fromCharCode(Number(d)))
    .replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/[\uff10-\uff19]/g, (c) => String(c.charCodeAt(0) - 0xff10));
}

/** Whether `text` still holds `pan` whole, in any spelling this file knows (separators dropped). */
export function reveals(text: string, pan: string): boolean {
  return unspelt(text)
    .replace(/[\s\-.+\u2010]/g, '')
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
