/**
 * What rests of a forward's request and answer — its record, a queued forward's stored answer, an
 * idempotent forward's replay (decisions 0104, 0113): pure functions and a stream tap, used by
 * ForwardExecutor, the job worker and ForwardIdempotency.
 * The request's redacted form itself is built by the fill (modules/vault/placeholders/placeholder-redaction.ts:
 * placeholder text where values were inserted); here every kept body goes through keptText: the values
 * the service filled withheld whatever their length, sensitive authentication data removed by field
 * name, card numbers in any spelling masked (card-data/). Headers are kept by allow-list.
 */
import { pipeline, Readable, Transform } from 'node:stream';
import { isAuthenticationDataField, withoutAuthenticationData } from '../../../platform/card-data/authentication-data';
import { maskCardNumbers } from '../../../platform/card-data/card-numbers';
import { readText, withCharset } from '../../../platform/card-data/text-encodings';
import { keptHeaderValue, REDACTED } from '../../../platform/logging/redaction';

/** Bytes of each body a record keeps; the rest is cut and the record says so (…_truncated). */
export const RECORDED_BODY_MAX_BYTES = 64 * 1024;
/**
 * Bytes kept past the cap: a card number or a field of authentication data that starts before the cut
 * is seen whole by the mask (19 digits spelt as character references, with separators, fit), so no
 * part of it that is not one on its own survives the cut.
 */
const PAN_CONTEXT = 512;
/** What the capture holds of a body: the cap and the context after it. */
export const CAPTURED_BYTES = RECORDED_BODY_MAX_BYTES + PAN_CONTEXT;

interface RecordedText {
  text: string;
  truncated: boolean;
}

/**
 * Withheld values this long or longer are removed wherever they stand; a shorter one (a security code,
 * an expiry month) only where it stands alone, not inside a longer run of digits or a word: `123` goes
 * from `"cvv":"123"` and `cvv=123`, not from `"amount":1234`.
 */
const WHOLE_MATCH_BELOW = 8;

/**
 * Whether a value filled for placeholder `key` is withheld: an expiry or a cardholder name is not
 * authentication data, and a short one (`12`, `2030`) stands for many a number in an answer, so it is
 * withheld from WHOLE_MATCH_BELOW characters on, as any value is, and so is a number's last4 or bin; every
 * other filled value (a number, a security code, a cryptogram, a 3-D Secure value, a secret's signature)
 * whatever its length.
 */
export function isWithheld(key: string, length: number): boolean {
  return length >= WHOLE_MATCH_BELOW || !(CARD_DETAIL.test(key) || TRUNCATED.test(key));
}
const CARD_DETAIL = /^(CARD_(NETWORK_TOKEN_)?EXPIRATION_DATE\w*|CARDHOLDER_NAME)_\d+(\s*\|.*)?$/;
/** What last4 and bin leave of a number is what PCI DSS 3.4 allows showing. */
const TRUNCATED = /\|\s*(last4|bin)\b/;

/**
 * `text` as it may be kept: each of `withheld` (values the service filled, which a downstream may echo)
 * replaced by [Redacted], the values of authentication-data fields removed, card numbers masked.
 */
export function keptText(text: string, withheld: readonly string[] = []): string {
  let out = text;
  for (const value of withheld) out = withoutValue(out, value);
  return maskCardNumbers(withoutAuthenticationData(out), { bareJson: true });
}

function withoutValue(text: string, value: string): string {
  if (value === '' || !text.includes(value)) return text;
  if (value.length >= WHOLE_MATCH_BELOW) return text.split(value).join(REDACTED);
  const edge = (c: string | undefined) =>
    c === undefined ? 'none' : /\d/.test(c) ? 'digit' : /\w/.test(c) ? 'word' : 'none';
  // A neighbour of the same kind as the value's edge makes the match part of something longer.
  const clash = (neighbour: string | undefined, own: string) => {
    const kind = edge(neighbour);
    return kind !== 'none' && (kind === edge(own) || (kind === 'digit' && edge(own) === 'word'));
  };
  let out = '';
  let at = 0;
  for (let found = text.indexOf(value); found >= 0; found = text.indexOf(value, found + 1)) {
    if (found < at) continue;
    if (clash(text[found - 1], value[0]) || clash(text[found + value.length], value[value.length - 1])) continue;
    out += text.slice(at, found) + REDACTED;
    at = found + value.length;
  }
  return out + text.slice(at);
}

/**
 * A whole body as it may rest (see keptText), in its own encoding: the same Buffer when nothing changed; UTF-8
 * and `charset` when a legacy charset, which cannot be written back, was changed (card-numbers.ts readText).
 */
function keptBody(
  body: Buffer,
  contentType: string | undefined,
  withheld: readonly string[],
): { bytes: Buffer; charset?: string } {
  const read = readText(body, contentType);
  const inEncoding = read.encoding === 'latin1' ? withheld.map(asLatin1) : withheld;
  return read.encode(keptText(read.text, inEncoding));
}

type Headers = Record<string, string | string[]>;

/**
 * A whole answer as it may rest (a queued forward's stored answer, an idempotent forward's replay): the
 * body through keptBody, each header value through keptText, [Redacted] for a header named as a code.
 */
export function keptAnswer(
  answer: { headers: Readonly<Headers>; body: Buffer },
  withheld: readonly string[],
): { headers: Headers; body: Buffer } {
  const headers: Headers = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    // A header named as a code (`X-Card-CVV`) keeps nothing of its value (decision 0136).
    const kept = (v: string) => (isAuthenticationDataField(name) ? REDACTED : keptText(v, withheld));
    headers[name] = Array.isArray(value) ? value.map(kept) : kept(value);
  }
  const contentType = answer.headers['content-type'];
  const type = Array.isArray(contentType) ? contentType[0] : contentType;
  const { bytes: body, charset } = keptBody(answer.body, type, withheld);
  if (charset !== undefined) headers['content-type'] = withCharset(type, charset);
  // A body that changed has another length; the transport computes it again.
  if (body !== answer.body) delete headers['content-length'];
  return { headers, body };
}

/** A value's UTF-8 bytes as Latin-1 text, as a body read byte for byte holds it. */
const asLatin1 = (value: string) => Buffer.from(value, 'utf8').toString('latin1');

/**
 * A body's recorded form from its first bytes (`head`, at least CAPTURED_BYTES of it when there are
 * that many) and its whole length: keptText, cut at RECORDED_BODY_MAX_BYTES, as text (UTF-8 bytes, or
 * UTF-16 decoded; bytes that are not text become U+FFFD; NUL, which a text column cannot hold, too).
 */
export function recordedText(
  head: Buffer,
  total: number,
  withheld: readonly string[] = [],
  contentType?: string,
): RecordedText {
  const read = readText(head, contentType);
  const encoding = read.encoding;
  // latin1: one character per byte, so the cut is in bytes; UTF-16 text is cut at as many characters.
  const inEncoding = encoding === 'latin1' ? withheld.map(asLatin1) : withheld;
  let text = keptText(read.text, inEncoding);
  const truncated = total > head.length || text.length > RECORDED_BODY_MAX_BYTES;
  // Once cut, the digits just before the cut may form a run of their own: masked again if it is a card number.
  if (text.length > RECORDED_BODY_MAX_BYTES) text = maskCardNumbers(text.slice(0, RECORDED_BODY_MAX_BYTES));
  const utf8 = encoding === 'latin1' ? Buffer.from(text, 'latin1').toString('utf8') : text;
  return { text: utf8.replaceAll('\u0000', '\ufffd'), truncated };
}

/**
 * The forwarded headers as a record keeps them: every name; the value of an allow-listed header
 * (redaction.ts) in placeholder form when the caller templated it (x-vault-forward-header-*), as sent
 * when passed through, unless an authentication method set or changed it (a signature, its
 * timestamp); [Redacted] for every other. `sent`: the headers as sent, after the methods; `filled`:
 * before them; `templated`: the placeholder form of each templated header.
 */
export function recordedHeaders(
  sent: Readonly<Record<string, string>>,
  filled: Readonly<Record<string, string>>,
  templated: ReadonlyMap<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(sent)) {
    out[name] = setByMethod(name, value, filled)
      ? REDACTED
      : (keptHeaderValue(name, templated.get(name) ?? value) as string);
  }
  return out;
}

/**
 * Whether an authentication method set or changed header `name` (sent as `value`; `filled` before the
 * methods): a signature or its timestamp. Not content-type, which a JWE step sets to its own.
 */
export function setByMethod(name: string, value: string, filled: Readonly<Record<string, string>>): boolean {
  return filled[name] !== value && name !== 'content-type';
}

/** The first CAPTURED_BYTES of a streamed body, and its length, as it goes through. */
export class BodyTap {
  private readonly chunks: Buffer[] = [];
  private held = 0;
  private total = 0;

  add(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.held >= CAPTURED_BYTES) return;
    const part = Buffer.from(chunk.subarray(0, CAPTURED_BYTES - this.held));
    this.chunks.push(part);
    this.held += part.length;
  }

  result(withheld: readonly string[] = [], contentType?: string): RecordedText {
    const { head, total } = this.captured();
    return recordedText(head, total, withheld, contentType);
  }

  /** The bytes held (the first CAPTURED_BYTES) and the body's whole length, for a body to be decoded first. */
  captured(): { head: Buffer; total: number } {
    return { head: Buffer.concat(this.chunks, this.held), total: this.total };
  }
}

/**
 * `body` passed through `tap`: what the caller reads is the same bytes, and an error of `body` (the
 * DownstreamClient's ProblemException) reaches the reader as it is; a reader that stops destroys `body`.
 */
export function tapped(body: Readable, tap: BodyTap): Readable {
  const through = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      tap.add(chunk);
      done(null, chunk);
    },
  });
  // Errors travel through the streams themselves (pipeline destroys each with the error); nothing to add here.
  pipeline(body, through, () => undefined);
  return through;
}
