import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import fc from 'fast-check';
import {
  BodyTap,
  CAPTURED_BYTES,
  RECORDED_BODY_MAX_BYTES,
  recordedHeaders,
  recordedText,
  tapped,
} from '../../src/modules/forwarding/record-bodies/body-capture';
import { redactedBytes, redactedText } from '../../src/modules/vault/placeholders/placeholder-redaction';
import { fillBytes, scanText } from '../../src/modules/vault/placeholders/placeholders';
import { holdsCardNumber } from '../../src/platform/card-data/card-numbers';

const PAN = '4111111111111111';

describe('the redacted form of a filled body (decision 0104)', () => {
  const values = new Map<string, Buffer>([
    ['CARD_NUMBER_1', Buffer.from(PAN)],
    ['if CARDHOLDER_NAME_1', Buffer.from('')],
    ['CARD_NUMBER_1 | last4', Buffer.from('1111')],
  ]);
  const truthy = (m: { key: string }) => (values.get(m.key)?.length ?? 0) > 0;

  it('puts each placeholder’s own text where the fill puts its value, and takes the fill’s branches', () => {
    const template = Buffer.from(
      'a {{ CARD_NUMBER_1 }} b {{CARD_NUMBER_1 | last4}} {% if CARDHOLDER_NAME_1 %}n{% else %}none{% endif %} \\{{ CARD_NUMBER_1 }}',
      'latin1',
    );
    const scan = scanText(template.toString('latin1'), 1);
    const filled = fillBytes(template, scan, values).toString();
    expect(filled).toBe(`a ${PAN} b 1111 none {{ CARD_NUMBER_1 }}`);
    const { head, total } = redactedBytes(template, scan, truthy, 1024);
    expect(head.toString()).toBe('a {{ CARD_NUMBER_1 }} b {{CARD_NUMBER_1 | last4}} none {{ CARD_NUMBER_1 }}');
    expect(total).toBe(head.length);
    expect(redactedText(scanText(template.toString('latin1'), 1), truthy)).toBe(head.toString());
  });

  it('keeps only the first `keep` bytes and counts the whole length', () => {
    const template = Buffer.from(`${'x'.repeat(10)}{{ CARD_NUMBER_1 }}${'y'.repeat(10)}`);
    const scan = scanText(template.toString('latin1'), 1);
    const { head, total } = redactedBytes(template, scan, truthy, 15);
    expect(head.toString()).toBe('xxxxxxxxxx{{ CA');
    expect(total).toBe(template.length);
  });
});

describe('recordedText: the cap, and no card number left in what is kept', () => {
  it('masks card numbers, also one cut by the cap, and says whether it cut', () => {
    const whole = recordedText(Buffer.from(`pan ${PAN}.`), 21);
    expect(whole).toEqual({ text: 'pan 411111******1111.', truncated: false });
    // A number straddling the cut: masked whole before the cut, so its first digits are not a number of their own.
    const straddling = Buffer.from(`${'a'.repeat(RECORDED_BODY_MAX_BYTES - 8)}${PAN}${'b'.repeat(30)}`);
    const cut = recordedText(straddling.subarray(0, CAPTURED_BYTES), straddling.length);
    expect(cut.truncated).toBe(true);
    expect(cut.text).toHaveLength(RECORDED_BODY_MAX_BYTES);
    expect(cut.text.endsWith('411111**')).toBe(true);
  });

  it('never keeps a Luhn-valid run, wherever the cap cuts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.stringMatching(/^[0-9a ]{0,60}$/), (offset, noise) => {
        const body = Buffer.from(`${'a'.repeat(RECORDED_BODY_MAX_BYTES - offset)}${noise}${PAN}${noise}`, 'latin1');
        const { text: kept } = recordedText(body.subarray(0, CAPTURED_BYTES), body.length);
        return !holdsCardNumber(kept);
      }),
      { numRuns: 200 },
    );
  });

  it('holds no NUL (a text column cannot) and reads other bytes as UTF-8', () => {
    expect(recordedText(Buffer.from([0x61, 0x00, 0xc3, 0xbc]), 4).text).toBe('a\ufffdü');
  });
});

describe('recordedHeaders', () => {
  it('keeps allow-listed values (templated ones in placeholder form), redacts every other and what a method set', () => {
    const filled = {
      'content-type': 'application/json',
      authorization: 'Bearer x',
      'x-ref': `r-${PAN}`,
      accept: '*/*',
    };
    const sent = { ...filled, 'content-type': 'application/jose', 'x-sig': 'abc', 'x-api-token': 't' };
    const templated = new Map([
      ['authorization', 'Bearer x'],
      ['x-ref', 'r-{{ CARD_NUMBER_1 }}'],
      ['x-api-token', 't'],
    ]);
    expect(recordedHeaders(sent, filled, templated)).toEqual({
      'content-type': 'application/jose',
      authorization: '[Redacted]',
      'x-ref': '[Redacted]',
      accept: '*/*',
      'x-sig': '[Redacted]',
      'x-api-token': '[Redacted]',
    });
  });
});

describe('tapped: a streamed answer read through the tap', () => {
  it('passes every byte on and keeps the first ones', async () => {
    const chunks = [Buffer.from(`${PAN} `), Buffer.alloc(RECORDED_BODY_MAX_BYTES, 0x62)];
    const tap = new BodyTap();
    const through = tapped(Readable.from(chunks), tap);
    expect(await text(through)).toBe(Buffer.concat(chunks).toString());
    const kept = tap.result();
    expect(kept.truncated).toBe(true);
    expect(kept.text.startsWith('411111******1111 bbb')).toBe(true);
  });

  it('hands the source’s error to the reader as it is', async () => {
    const failure = new Error('reset');
    const source = new Readable({ read() {} });
    const through = tapped(source, new BodyTap());
    const read = text(through);
    source.push('abc');
    source.destroy(failure);
    await expect(read).rejects.toBe(failure);
  });
});
