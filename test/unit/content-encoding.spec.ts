import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import {
  contentCodings,
  decodeContent,
  DECODED_MAX_BYTES,
  MAX_DECODE_RATIO,
  RATIO_GRACE_BYTES,
} from '../../src/platform/http/content-encoding';

/** Decision 0137: the one decoder of content codings, on bodies compressed here with node:zlib. */

/** Whether this runtime's zlib has zstd (Node 24 does, Node 20 does not). */
const runtimeZstd = typeof (zlib as { zstdDecompress?: unknown }).zstdDecompress === 'function';

/** zstd-compressed `data`: with node:zlib where it has zstd, else with the zstd command line tool. */
function zstdCompress(data: Buffer): Buffer {
  const compress = (zlib as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;
  return compress ? compress(data) : execFileSync('zstd', ['-c', '-q'], { input: data });
}

const ANSWER = Buffer.from(JSON.stringify({ number: '4111111111111111', cvv: '123', note: 'é'.repeat(50) }), 'utf8');

const ENCODERS: Record<string, (data: Buffer) => Buffer> = {
  gzip: (d) => zlib.gzipSync(d),
  'x-gzip': (d) => zlib.gzipSync(d),
  deflate: (d) => zlib.deflateSync(d),
  br: (d) => zlib.brotliCompressSync(d),
};

describe('decodeContent', () => {
  it.each(Object.keys(ENCODERS))('decodes %s', async (coding) => {
    await expect(decodeContent(ENCODERS[coding](ANSWER), coding)).resolves.toEqual({ ok: true, body: ANSWER });
  });

  it('decodes raw deflate (no zlib header), as some servers send it', async () => {
    await expect(decodeContent(zlib.deflateRawSync(ANSWER), 'deflate')).resolves.toEqual({ ok: true, body: ANSWER });
  });

  it('decodes a gzip body of several members', async () => {
    const body = Buffer.concat([zlib.gzipSync(ANSWER.subarray(0, 10)), zlib.gzipSync(ANSWER.subarray(10))]);
    await expect(decodeContent(body, 'gzip')).resolves.toEqual({ ok: true, body: ANSWER });
  });

  it('decodes zstd where the runtime has it, and says it cannot where it has not', async () => {
    const result = await decodeContent(zstdCompress(ANSWER), 'zstd');
    if (runtimeZstd) expect(result).toEqual({ ok: true, body: ANSWER });
    else expect(result).toEqual({ ok: false, why: 'zstd body: this runtime does not decode zstd' });
  });

  it('undoes a list of codings right to left, in any case and spacing', async () => {
    const body = zlib.brotliCompressSync(zlib.deflateSync(zlib.gzipSync(ANSWER)));
    await expect(decodeContent(body, 'GZIP ,deflate,  br')).resolves.toEqual({ ok: true, body: ANSWER });
    await expect(decodeContent(body, ['gzip', 'deflate, br'])).resolves.toEqual({ ok: true, body: ANSWER });
  });

  it('passes identity, none and an empty body through', async () => {
    await expect(decodeContent(ANSWER, 'identity')).resolves.toEqual({ ok: true, body: ANSWER });
    await expect(decodeContent(ANSWER, undefined)).resolves.toEqual({ ok: true, body: ANSWER });
    await expect(decodeContent(Buffer.alloc(0), 'gzip')).resolves.toEqual({ ok: true, body: Buffer.alloc(0) });
  });

  it('refuses a gzip bomb: 10 MB of zeros stops at the cap', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(10_000_000));
    const cap = Math.min(DECODED_MAX_BYTES, bomb.length * MAX_DECODE_RATIO);
    await expect(decodeContent(bomb, 'gzip', { noun: 'answer' })).resolves.toEqual({
      ok: false,
      why: `gzip answer over ${cap} bytes decoded (${MAX_DECODE_RATIO} times its ${bomb.length} bytes)`,
    });
  });

  it('refuses by size a body that decodes past 1 MiB, whatever its ratio', async () => {
    const plain = Buffer.from(randomBytes(DECODED_MAX_BYTES).toString('hex'));
    const body = zlib.gzipSync(plain);
    expect(body.length * MAX_DECODE_RATIO).toBeGreaterThan(DECODED_MAX_BYTES);
    await expect(decodeContent(body, 'gzip')).resolves.toEqual({
      ok: false,
      why: `gzip body over ${DECODED_MAX_BYTES} bytes decoded`,
    });
  });

  it('refuses a brotli bomb by ratio: 10 MB of zeros is a few bytes of br', async () => {
    const bomb = zlib.brotliCompressSync(Buffer.alloc(10_000_000));
    const cap = Math.max(RATIO_GRACE_BYTES, bomb.length * MAX_DECODE_RATIO);
    expect(cap).toBeLessThan(DECODED_MAX_BYTES);
    await expect(decodeContent(bomb, 'br')).resolves.toEqual({
      ok: false,
      why: `br body over ${cap} bytes decoded (${MAX_DECODE_RATIO} times its ${bomb.length} bytes)`,
    });
  });

  it('refuses by ratio a body past the grace that grew more than 100 times', async () => {
    const plain = Buffer.alloc(RATIO_GRACE_BYTES * 4, 'a');
    const body = zlib.gzipSync(plain);
    expect(plain.length).toBeGreaterThan(body.length * MAX_DECODE_RATIO);
    const result = await decodeContent(body, 'gzip');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.why).toMatch(/^gzip body over \d+ bytes decoded \(100 times its \d+ bytes\)$/);
  });

  it('allows a short body of repeated text whatever its ratio (the grace)', async () => {
    const plain = Buffer.alloc(RATIO_GRACE_BYTES, 'a');
    const body = zlib.gzipSync(plain);
    expect(plain.length).toBeGreaterThan(body.length * MAX_DECODE_RATIO);
    await expect(decodeContent(body, 'gzip')).resolves.toEqual({ ok: true, body: plain });
  });

  it('refuses a bomb at every step of a list (gzip inside br)', async () => {
    const bomb = zlib.brotliCompressSync(zlib.gzipSync(Buffer.alloc(50_000_000)));
    const result = await decodeContent(bomb, 'gzip, br');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.why).toMatch(/^gzip, br body over \d+ bytes decoded/);
  });

  it('honours a smaller maxBytes', async () => {
    const body = zlib.gzipSync(ANSWER);
    await expect(decodeContent(body, 'gzip', { maxBytes: 10 })).resolves.toEqual({
      ok: false,
      why: 'gzip body over 10 bytes decoded',
    });
  });

  it.each([
    ['gzip', Buffer.from('not gzip at all')],
    ['gzip', zlib.gzipSync(ANSWER).subarray(0, 30)],
    ['deflate', Buffer.from([0xff, 0xff, 0xff, 0xff])],
    ['br', Buffer.from('not brotli')],
    ['gzip, br', zlib.brotliCompressSync(Buffer.from('plain, not gzip'))],
  ])('refuses corrupt or cut %s', async (coding, body) => {
    const result = await decodeContent(body, coding);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.why).toMatch(new RegExp(`^${coding} body does not decode as (gzip|deflate|br)$`));
  });

  it('refuses a coding it does not know, naming it only when it is a short token', async () => {
    await expect(decodeContent(ANSWER, 'compress')).resolves.toEqual({
      ok: false,
      why: 'body in a content-encoding not decoded (compress)',
    });
    await expect(decodeContent(ANSWER, 'gzip, 4111111111111111 x')).resolves.toEqual({
      ok: false,
      why: 'body in a content-encoding not decoded (unrecognised)',
    });
  });
});

describe('contentCodings', () => {
  it('lists the codings in the order they were applied, identity left out', () => {
    expect(contentCodings('gzip, identity, BR')).toEqual(['gzip', 'br']);
    expect(contentCodings(['gzip', 'br'])).toEqual(['gzip', 'br']);
    expect(contentCodings(undefined)).toEqual([]);
    expect(contentCodings(' identity ')).toEqual([]);
  });
});
