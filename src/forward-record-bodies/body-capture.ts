/**
 * What a forward record keeps of a forward's request and answer (decision 0104): pure functions and a
 * stream tap, used by ForwardExecutor. The request's redacted form itself is built by the fill
 * (placeholders/placeholder-redaction.ts: placeholder text where values were inserted); here it is
 * capped, and every Luhn-valid 13–19 digit run left in either body is masked with the response rules'
 * unmatched_pan detector: a card number typed by the caller or returned by the downstream outside any
 * rule never lands in a record either.
 */
import { pipeline, Readable, Transform } from 'node:stream';
import { maskCardNumbers } from '../forward-responses/response-rules-engine';
import { isSecretHeader, REDACTED } from '../logging/redaction';

/** Bytes of each body a record keeps; the rest is cut and the record says so (…_truncated). */
export const RECORDED_BODY_MAX_BYTES = 64 * 1024;
/**
 * Bytes kept past the cap: a card number (at most 19 digits) that starts before the cut is seen whole
 * by the mask, so no part of it that is not a card number on its own survives the cut.
 */
const PAN_CONTEXT = 19;
/** What the capture holds of a body: the cap and the context after it. */
export const CAPTURED_BYTES = RECORDED_BODY_MAX_BYTES + PAN_CONTEXT;

export interface RecordedText {
  text: string;
  truncated: boolean;
}

/** Withheld values shorter than this are not looked for in an answer: they would match unrelated text. */
export const MIN_WITHHELD_LENGTH = 8;

/**
 * A body's recorded form from its first bytes (`head`, at least CAPTURED_BYTES of it when there are
 * that many) and its whole length: each of `withheld` (values the request carried that its record
 * does not show, which a downstream may echo) replaced by [Redacted], card numbers masked, cut at
 * RECORDED_BODY_MAX_BYTES, as text (bytes that are not UTF-8 become U+FFFD; NUL, which a text
 * column cannot hold, too).
 */
export function recordedText(head: Buffer, total: number, withheld: readonly string[] = []): RecordedText {
  // latin1: one character per byte, so the mask keeps offsets (it keeps lengths) and the cut is in bytes.
  let text = head.toString('latin1');
  for (const value of withheld) {
    if (value.length < MIN_WITHHELD_LENGTH) continue;
    const bytes = Buffer.from(value, 'utf8').toString('latin1');
    if (text.includes(bytes)) text = text.split(bytes).join(REDACTED);
  }
  text = maskCardNumbers(text);
  const truncated = total > head.length || text.length > RECORDED_BODY_MAX_BYTES;
  // Once cut, the digits just before the cut may form a run of their own: masked again if it is a card number.
  if (text.length > RECORDED_BODY_MAX_BYTES) text = maskCardNumbers(text.slice(0, RECORDED_BODY_MAX_BYTES));
  return { text: Buffer.from(text, 'latin1').toString('utf8').replaceAll('\u0000', '\ufffd'), truncated };
}

/** Header names that carry credentials by convention, redacted wherever they came from. */
const CREDENTIAL_NAME = /auth|key|token|secret|sign|password|passwd|cookie|session|credential|cryptogram|cvv|cvc/i;

/**
 * The forwarded headers as a record keeps them: every name; the value in placeholder form for a
 * header the caller templated (x-vault-forward-header-*), as sent for one passed through; redacted
 * when the name is secret-bearing (Authorization, cookies, API keys, anything that looks like a
 * credential) or when an authentication method set or changed it (an HMAC signature, its timestamp).
 * `sent`: the headers as sent, after the methods; `filled`: before them; `templated`: the placeholder
 * form of each templated header.
 */
export function recordedHeaders(
  sent: Readonly<Record<string, string>>,
  filled: Readonly<Record<string, string>>,
  templated: ReadonlyMap<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(sent)) {
    if (setByMethod(name, value, filled) || isSecretHeader(name) || CREDENTIAL_NAME.test(name)) out[name] = REDACTED;
    else out[name] = maskCardNumbers(templated.get(name) ?? value);
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

  result(withheld: readonly string[] = []): RecordedText {
    return recordedText(Buffer.concat(this.chunks, this.held), this.total, withheld);
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
