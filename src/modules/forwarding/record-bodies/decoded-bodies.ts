/**
 * What rests of a body sent or answered with a Content-Encoding (decision 0137): decoded first
 * (platform/http/content-encoding.ts, within its caps), then kept as body-capture.ts keeps any body, and
 * stored without `content-encoding` or `content-length`. A body that does not decode within the caps
 * (a bomb, corrupt bytes, a coding we do not decode) is not kept at all: a stated placeholder instead,
 * so no compressed byte, which no mask can read, is ever stored.
 *
 *   keptDecodedAnswer(answer, withheld)  a queued forward's stored answer, an idempotent replay (and so a
 *     callback): decoded and masked; not decodable: an empty body and NOT_KEPT_HEADER saying why
 *   recordedBody(head, total, headers, o)  a record's request or answer body: decoded and masked; not
 *     decodable, or longer than what the record captured (a streamed answer): `[not kept: …]`
 */
import { contentCodings, type ContentDecoding, decodeContent } from '../../../platform/http/content-encoding';
import { CAPTURED_BYTES, keptAnswer, recordedText } from './body-capture';

/** On a stored answer whose body was not kept, why (`gzip answer over 1048576 bytes decoded`). */
const NOT_KEPT_HEADER = 'x-vault-forward-not-kept';

type Headers = Record<string, string | string[]>;

/**
 * One decoding per body: on the synchronous path the record and the idempotent replay keep the same
 * answer, so it is decoded once.
 */
const decodings = new WeakMap<Buffer, Promise<ContentDecoding>>();

function decoded(body: Buffer, coding: string | readonly string[], noun: string): Promise<ContentDecoding> {
  let decoding = decodings.get(body);
  if (decoding === undefined) {
    decoding = decodeContent(body, coding, { noun });
    decodings.set(body, decoding);
  }
  return decoding;
}

/** `answer` as it may rest (keptAnswer), its body decoded first when it came with a content-encoding. */
export async function keptDecodedAnswer(
  answer: { headers: Readonly<Headers>; body: Buffer },
  withheld: readonly string[],
): Promise<{ headers: Headers; body: Buffer }> {
  const coding = answer.headers['content-encoding'];
  if (coding === undefined || contentCodings(coding).length === 0) return keptAnswer(answer, withheld);
  const headers = { ...answer.headers };
  delete headers['content-encoding'];
  delete headers['content-length'];
  const result = await decoded(answer.body, coding, 'answer');
  if (result.ok) return keptAnswer({ headers, body: result.body }, withheld);
  const kept = keptAnswer({ headers, body: Buffer.alloc(0) }, withheld);
  kept.headers[NOT_KEPT_HEADER] = result.why;
  return kept;
}

/**
 * A record's body (recordedText) from its first bytes `head`, its whole length `total` and the headers it
 * was sent with (content-type, content-encoding), decoded first when it has a content-encoding. A
 * compressed body only partly captured (a streamed answer longer than the capture) cannot be decoded
 * whole: it is not kept. `noun` names the body in the placeholder: `answer`, `request body`.
 */
export async function recordedBody(
  head: Buffer,
  total: number,
  headers: Readonly<Headers>,
  options: { noun: string; withheld?: readonly string[] },
): Promise<{ text: string; truncated: boolean }> {
  const { noun, withheld = [] } = options;
  const type = headers['content-type'];
  const contentType = Array.isArray(type) ? type[0] : type;
  const coding = headers['content-encoding'];
  const codings = contentCodings(coding);
  if (coding === undefined || codings.length === 0) return recordedText(head, total, withheld, contentType);
  if (total > head.length)
    return notKept(`${codings.join(', ')} ${noun} over ${head.length} bytes encoded, not decoded for the record`);
  const result = await decoded(head, coding, noun);
  if (!result.ok) return notKept(result.why);
  return recordedText(result.body.subarray(0, CAPTURED_BYTES), result.body.length, withheld, contentType);
}

function notKept(why: string): { text: string; truncated: boolean } {
  return { text: `[not kept: ${why}]`, truncated: false };
}
