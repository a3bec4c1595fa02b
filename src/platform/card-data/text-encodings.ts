/**
 * A body's bytes as text and back (decision 0135): the encoding its byte-order mark, shape or charset says
 * (UTF-8, UTF-16, UTF-32, a legacy charset), decoded for the detector and written back byte for byte but
 * for what was masked.
 */
import { wellFormed } from './spelt-characters';
/** How a body's bytes were read as text. */
type TextEncoding = 'utf8' | 'latin1' | 'utf16le' | 'utf16be' | 'utf32le' | 'utf32be' | 'legacy';

/** A body read as text, and the way back to bytes. */
interface BodyText {
  text: string;
  /**
   * How: `latin1` is one character a byte (bytes that are no UTF-8, or a single-byte charset: ASCII digits
   * are ASCII there), `legacy` a multi-byte charset (Shift_JIS, GBK, Big5, EUC …) read by TextDecoder.
   */
  encoding: TextEncoding;
  /**
   * `text` (this one or a masked copy) as bytes: the bytes read, byte for byte, where the text is the same;
   * in `legacy`, which cannot be written back, the text changed is UTF-8 and `charset` says so: the caller
   * sets `charset=utf-8` on its content type.
   */
  encode(text: string): { bytes: Buffer; charset?: 'utf-8' };
}

/** Multi-byte charsets TextDecoder reads that may spell digits otherwise than ASCII does (fullwidth ones). */
const LEGACY_MULTIBYTE = new Set(
  [
    'shift_jis shift-jis sjis x-sjis ms_kanji windows-31j csshiftjis euc-jp x-euc-jp iso-2022-jp csiso2022jp',
    'gbk gb2312 gb18030 x-gbk csgb2312 chinese big5 big5-hkscs x-x-big5 cn-big5 csbig5',
    'euc-kr ks_c_5601-1987 windows-949 cseuckr ksc5601 korean',
  ].flatMap((names) => names.split(' ')),
);

/** The charset parameter of a content type, lower case. */
const charsetOf = (contentType?: string | null) =>
  /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();

/**
 * Which of UTF-16 and UTF-32, in which order, the bytes' NUL bytes say (text mostly below U+0100 has a NUL
 * in the high byte of every unit, which UTF-8 and single-byte text next to never have); null when they do
 * not say.
 */
function shapeOf(bytes: Buffer): TextEncoding | null {
  const sample = Math.min(bytes.length, 1024) & ~3;
  if (sample < 8) return null;
  const zeros = [0, 0, 0, 0];
  for (let i = 0; i < sample; i++) if (bytes[i] === 0) zeros[i & 3]++;
  const q = sample / 4;
  // UTF-32: the top byte always 0, the next nearly always (the BMP); the lowest seldom.
  if (zeros[3] === q && zeros[2] * 10 >= q * 9 && zeros[0] * 4 < q) return 'utf32le';
  if (zeros[0] === q && zeros[1] * 10 >= q * 9 && zeros[3] * 4 < q) return 'utf32be';
  const even = zeros[0] + zeros[2];
  const odd = zeros[1] + zeros[3];
  const half = sample / 2;
  if (odd * 2 >= half && even * 8 < half) return 'utf16le';
  if (even * 2 >= half && odd * 8 < half) return 'utf16be';
  return null;
}

/** Whether every byte is ASCII and none is NUL: UTF-8 (and any ASCII charset), whatever a label says. */
function plainAscii(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0 || bytes[i] > 0x7f) return false;
  return true;
}

/**
 * How many bytes at the end of `bytes` begin a UTF-8 character they do not finish (0–3): a body's head cut
 * inside a character.
 */
function unfinishedUtf8(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back];
    if (b < 0x80) return 0;
    if (b >= 0xc0) {
      const needs = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return needs > back ? back : 0;
    }
  }
  return 0;
}

/**
 * Which encoding `bytes` are text in, shape first: a byte-order mark; the NUL bytes of UTF-16 or UTF-32
 * (so a wrong charset, `iso-8859-1` on UTF-16, does not hide the text); ASCII without NUL, which is
 * UTF-8 whatever the label; the charset's UTF-16 or UTF-32; valid UTF-8; a multi-byte legacy charset
 * TextDecoder knows; Latin-1, one character a byte.
 */
export function textEncodingOf(bytes: Buffer, contentType?: string | null): Exclude<TextEncoding, 'legacy'> {
  const encoding = encodingOf(bytes, contentType);
  // Without readText's way back, a legacy charset is read as the bytes it is (its ASCII digits are ASCII).
  return encoding === 'legacy' ? 'latin1' : encoding;
}

function encodingOf(bytes: Buffer, contentType?: string | null): TextEncoding {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe && bytes[2] === 0 && bytes[3] === 0 && bytes.length % 4 === 0)
    return 'utf32le';
  if (bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 0xfe && bytes[3] === 0xff) return 'utf32be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf16be';
  const shape = shapeOf(bytes);
  if (shape !== null && (!shape.startsWith('utf32') || utf32Valid(bytes, shape === 'utf32le'))) return shape;
  if (plainAscii(bytes)) return 'utf8';
  const charset = charsetOf(contentType);
  if (charset === 'utf-16le') return 'utf16le';
  if (charset === 'utf-16be' || charset === 'utf-16') return 'utf16be';
  if ((charset === 'utf-32le' || charset === 'utf-32') && utf32Valid(bytes, true)) return 'utf32le';
  if (charset === 'utf-32be' && utf32Valid(bytes, false)) return 'utf32be';
  if (isUtf8(bytes.subarray(0, bytes.length - unfinishedUtf8(bytes)))) return 'utf8';
  if (charset !== undefined && LEGACY_MULTIBYTE.has(charset) && legacyDecoder(charset) !== null) return 'legacy';
  return 'latin1';
}

/** Whether `bytes` (whole units of 4) are UTF-32 code points in that order. */
function utf32Valid(bytes: Buffer, little: boolean): boolean {
  for (let i = 0; i + 4 <= bytes.length; i += 4) {
    if ((little ? bytes.readUInt32LE(i) : bytes.readUInt32BE(i)) > 0x10ffff) return false;
  }
  return true;
}

function legacyDecoder(charset: string): InstanceType<typeof TextDecoder> | null {
  try {
    return new TextDecoder(charset);
  } catch {
    return null;
  }
}

/**
 * `bytes` read as text (see textEncodingOf), with the way back. Bytes that end inside a character (a cut
 * head, an odd byte of UTF-16) are left out of the text and put back as they were by `encode`.
 */
export function readText(bytes: Buffer, contentType?: string | null): BodyText {
  const encoding = encodingOf(bytes, contentType);
  const whole =
    encoding === 'utf8'
      ? bytes.length - unfinishedUtf8(bytes)
      : encoding === 'utf16le' || encoding === 'utf16be'
        ? bytes.length & ~1
        : encoding === 'utf32le' || encoding === 'utf32be'
          ? bytes.length & ~3
          : bytes.length;
  const rest = bytes.subarray(whole);
  const text = decodeText(bytes.subarray(0, whole), encoding, contentType);
  return {
    text,
    encoding,
    encode(changed: string) {
      if (changed === text) return { bytes };
      if (encoding === 'legacy') return { bytes: Buffer.from(changed, 'utf8'), charset: 'utf-8' };
      const out = encodeText(changed, encoding);
      return { bytes: rest.length === 0 ? out : Buffer.concat([out, rest]) };
    },
  };
}

/** `contentType` with its charset `charset` (added where it had none): what a caller sets when encode says so. */
export function withCharset(contentType: string | undefined, charset: string): string {
  const type = contentType ?? 'text/plain';
  return /charset\s*=/i.test(type)
    ? type.replace(/charset\s*=\s*"?[\w.:-]+"?/i, `charset=${charset}`)
    : `${type}; charset=${charset}`;
}

/** Bytes as text in `encoding` (see textEncodingOf): Latin-1 keeps every byte as it is. */
export function decodeText(bytes: Buffer, encoding: TextEncoding, contentType?: string | null): string {
  switch (encoding) {
    case 'utf16be':
      return Buffer.from(bytes.subarray(0, bytes.length & ~1))
        .swap16()
        .toString('utf16le');
    case 'utf32le':
    case 'utf32be': {
      const little = encoding === 'utf32le';
      const parts: string[] = [];
      let chunk: number[] = [];
      for (let i = 0; i + 4 <= bytes.length; i += 4) {
        const cp = little ? bytes.readUInt32LE(i) : bytes.readUInt32BE(i);
        chunk.push(cp > 0x10ffff ? 0xfffd : cp);
        if (chunk.length === 4096) {
          parts.push(String.fromCodePoint(...chunk));
          chunk = [];
        }
      }
      parts.push(String.fromCodePoint(...chunk));
      return parts.join('');
    }
    case 'legacy':
      return legacyDecoder(charsetOf(contentType) ?? 'latin1')?.decode(bytes) ?? bytes.toString('latin1');
    default:
      return bytes.toString(encoding);
  }
}

/** Text back to bytes in `encoding`; `legacy`, which cannot be written, as UTF-8. */
export function encodeText(text: string, encoding: TextEncoding): Buffer {
  switch (encoding) {
    case 'utf16be':
      return Buffer.from(text, 'utf16le').swap16();
    case 'utf32le':
    case 'utf32be': {
      const out = Buffer.alloc(text.length * 4);
      let at = 0;
      for (let i = 0; i < text.length; i++) {
        const cp = text.codePointAt(i)!;
        if (cp > 0xffff) i++;
        if (encoding === 'utf32le') out.writeUInt32LE(cp, at);
        else out.writeUInt32BE(cp, at);
        at += 4;
      }
      return out.subarray(0, at);
    }
    case 'legacy':
      return Buffer.from(text, 'utf8');
    default:
      return Buffer.from(text, encoding);
  }
}

/** Whether `bytes` are well-formed UTF-8 (RFC 3629: shortest forms, no surrogates, nothing past U+10FFFF). */
function isUtf8(bytes: Uint8Array): boolean {
  const n = bytes.length;
  for (let i = 0; i < n;) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    const trail = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (trail < 0 || i + trail >= n) return false;
    let value = b & (trail === 3 ? 0x07 : trail === 2 ? 0x0f : 0x1f);
    for (let k = 1; k <= trail; k++) {
      const next = bytes[i + k];
      if (next < 0x80 || next > 0xbf) return false;
      value = (value << 6) | (next & 0x3f);
    }
    if (!wellFormed(value, trail)) return false;
    i += trail + 1;
  }
  return true;
}
