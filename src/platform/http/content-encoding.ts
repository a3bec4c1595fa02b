/**
 * The one decoder of HTTP content codings (RFC 9110 §8.4): what a body's `Content-Encoding` says was
 * applied to it, undone, within caps, before anything reads the body's text (decision 0137).
 *
 *   decodeContent(body, contentEncoding, limits?): Promise<ContentDecoding>
 *     `{ ok: true, body }` decoded, or `{ ok: false, why }` with why it was not (a bomb, corrupt bytes, a
 *     coding we do not decode). Never throws, never inflates more than the cap into memory.
 *   contentCodings(header): string[]   the codings a header lists, in the order they were applied
 *
 * Codings: gzip (and its alias x-gzip, several members too), deflate (zlib-wrapped as RFC 9110 says, or
 * raw as some servers send it), br, zstd (where the runtime has it: Node 24's zlib), identity. A list
 * (`gzip, br`) was applied left to right, so it is undone right to left. Anything else (compress, a typo)
 * is refused, never guessed.
 *
 * The caps are enforced while decoding (zlib's maxOutputLength: the decoder stops and fails once its
 * output passes the cap), at every step of a list:
 * - at most `maxBytes` decoded (default DECODED_MAX_BYTES, 1 MiB: the size response rules read);
 * - at most MAX_DECODE_RATIO times the encoded size, once past RATIO_GRACE_BYTES: a small answer of
 *   repeated text may legitimately shrink a lot, a large ratio on a large output is a bomb.
 */
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';

/** The most a body is decoded to: the size response rules read whole (answers/response-filter.ts RULES_MAX_BYTES). */
export const DECODED_MAX_BYTES = 1024 * 1024;
/**
 * How many times its encoded size a body may grow when decoded, once past RATIO_GRACE_BYTES. JSON and XML
 * answers compress 5 to 20 times; a bomb (zeros, one repeated byte) 1,000 (gzip) to 100,000 times (br, zstd).
 */
export const MAX_DECODE_RATIO = 100;
/** Decoded bytes allowed whatever the ratio: a short answer of repeated text is no bomb. */
export const RATIO_GRACE_BYTES = 64 * 1024;

export type ContentDecoding = { ok: true; body: Buffer } | { ok: false; why: string };

interface Limits {
  maxBytes?: number;
  /** What the body is, for `why`: `answer`, `request body`; default `body`. */
  noun?: string;
}

type Decode = (body: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>;

const gunzip = promisify(zlib.gunzip) as Decode;
const inflate = promisify(zlib.inflate) as Decode;
const inflateRaw = promisify(zlib.inflateRaw) as Decode;
const brotli = promisify(zlib.brotliDecompress) as Decode;
/** zstd is in Node's zlib from 22.15 / 24 on; on an older runtime a zstd body is one we cannot decode. */
const zstd: Decode | null =
  typeof (zlib as { zstdDecompress?: unknown }).zstdDecompress === 'function' ? promisify(zlib.zstdDecompress) : null;

/** deflate: RFC 1950 (a zlib header: CM 8 and a check that divides by 31), else raw RFC 1951. */
const deflate: Decode = (body, options) =>
  body.length >= 2 && (body[0] & 0x0f) === 8 && ((body[0] << 8) | body[1]) % 31 === 0
    ? inflate(body, options)
    : inflateRaw(body, options);

const DECODERS: Record<string, Decode | null> = {
  gzip: gunzip,
  'x-gzip': gunzip,
  deflate,
  br: brotli,
  zstd,
};

/** The codings `header` lists (lower case, identity left out), in the order they were applied. */
export function contentCodings(header: string | readonly string[] | undefined): string[] {
  if (header === undefined) return [];
  const joined = typeof header === 'string' ? header : header.join(',');
  return joined
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** A coding's name as a message may show it: a token, short; anything else is not repeated. */
function shown(coding: string): string {
  return /^[a-z0-9._+-]{1,32}$/.test(coding) ? coding : 'unrecognised';
}

/** `body` with every coding of `contentEncoding` undone, within the caps; or why it could not be. */
export async function decodeContent(
  body: Buffer,
  contentEncoding: string | readonly string[] | undefined,
  limits: Limits = {},
): Promise<ContentDecoding> {
  const codings = contentCodings(contentEncoding);
  const noun = limits.noun ?? 'body';
  const maxBytes = limits.maxBytes ?? DECODED_MAX_BYTES;
  const byRatio = Math.max(RATIO_GRACE_BYTES, body.length * MAX_DECODE_RATIO);
  const cap = Math.min(maxBytes, byRatio);
  const over =
    cap < maxBytes
      ? `over ${cap} bytes decoded (${MAX_DECODE_RATIO} times its ${body.length} bytes)`
      : `over ${maxBytes} bytes decoded`;
  for (const coding of codings) {
    if (!(coding in DECODERS))
      return { ok: false, why: `${noun} in a content-encoding not decoded (${shown(coding)})` };
    if (DECODERS[coding] === null)
      return { ok: false, why: `${coding} ${noun}: this runtime does not decode ${coding}` };
  }
  let out = body;
  const label = codings.join(', ');
  for (const coding of [...codings].reverse()) {
    // An empty body (a 204, a HEAD) has nothing to decode.
    if (out.length === 0) break;
    try {
      out = await DECODERS[coding]!(out, { maxOutputLength: cap });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
        return { ok: false, why: `${label} ${noun} ${over}` };
      return { ok: false, why: `${label} ${noun} does not decode as ${coding}` };
    }
  }
  return { ok: true, body: out };
}
