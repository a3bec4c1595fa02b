import type { IncomingMessage } from 'node:http';
import { readText, withCharset } from '../../../platform/card-data/text-encodings';
import { decodeContent } from '../../../platform/http/content-encoding';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';
import type { InflightLease } from '../../forwarding/sending/inflight-bytes';
import type { BodyFormat } from '../bodies/body-paths';
import { InboundErrors } from './inbound.errors';

/** A body as text, and the way back to bytes once it has been rewritten. */
interface InboundText {
  format: BodyFormat | 'text';
  text: string;
  /** The rewritten text as the bytes sent on, with the content type that says how (a charset may change). */
  encode(text: string): { bytes: Buffer; contentType: string | undefined };
}

/**
 * The whole body, refused (413) as soon as it passes the route's limit, declared or not. Each chunk is counted
 * against the process's in-flight bytes (the forward's bound, FORWARD_MAX_INFLIGHT_BYTES), so inbound requests
 * and forwards share one memory ceiling.
 */
export async function readWhole(req: IncomingMessage, limit: number, lease: InflightLease): Promise<Buffer> {
  const tooLarge = () =>
    new ProblemException(CommonErrors.payloadTooLarge, `The request body is larger than the route’s ${limit} bytes.`, [
      { location: 'body', name: 'body', message: `over max_body_bytes (${limit})` },
    ]);
  if (Number(req.headers['content-length']) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  // Not destroyed when a limit stops the read: the socket must stay up for the 413 (sent with connection: close).
  for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    lease.take(chunk.length, { location: 'body', name: 'body', message: 'no room for the request body now' });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** Which reader a content type asks for; anything but JSON, XML and a form is text the detector alone reads. */
function formatOf(contentType: string | undefined): BodyFormat | 'text' {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/json' || /^application\/[\w.+-]+\+json$/.test(type)) return 'json';
  if (type === 'application/xml' || type === 'text/xml' || /^application\/[\w.+-]+\+xml$/.test(type)) return 'xml';
  if (type === 'application/x-www-form-urlencoded') return 'form';
  return 'text';
}

/**
 * The body decoded: its content-encoding undone within the route's limit (the one decoder of answers,
 * platform/http/content-encoding.ts), then its text. JSON, XML and forms are UTF-8 only and read strictly (bytes
 * that are not UTF-8 are refused); any other type is read as the card-data detector reads text (text-encodings.ts:
 * UTF-8, UTF-16, a legacy charset, else one character a byte) and written back byte for byte but for what changed.
 */
export async function inboundText(
  raw: Buffer,
  contentType: string | undefined,
  contentEncoding: string | string[] | undefined,
  limit: number,
): Promise<InboundText> {
  const decoded = await decodeContent(raw, contentEncoding, { maxBytes: limit, noun: 'body' });
  if (!decoded.ok)
    throw new ProblemException(InboundErrors.bodyUnreadable, `The body cannot be decoded: ${decoded.why}.`, [
      { location: 'header', name: 'content-encoding', message: decoded.why },
    ]);
  const format = formatOf(contentType);
  if (format === 'text') {
    const read = readText(decoded.body, contentType);
    return {
      format,
      text: read.text,
      encode: (text) => {
        const out = read.encode(text);
        return { bytes: out.bytes, contentType: out.charset ? withCharset(contentType, out.charset) : contentType };
      },
    };
  }
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && !['utf-8', 'utf8', 'us-ascii'].includes(charset))
    throw new ProblemException(InboundErrors.unsupportedCharset, `A ${format} body is read as UTF-8 only.`, [
      { location: 'header', name: 'content-type', message: 'charset other than UTF-8' },
    ]);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(decoded.body);
  } catch {
    throw new ProblemException(InboundErrors.bodyUnreadable, 'The body is not UTF-8.', [
      { location: 'body', name: 'body', message: 'bytes that are not UTF-8' },
    ]);
  }
  return { format, text, encode: (changed) => ({ bytes: Buffer.from(changed, 'utf8'), contentType }) };
}
