import { findCardNumbers, holdsCardNumber, maskCardNumbers } from '../../src/platform/card-data/card-numbers';
import { DIGIT_ZEROS, digitValue } from '../../src/platform/card-data/spelt-characters';
import { readText } from '../../src/platform/card-data/text-encodings';
import { CORPUS, reveals, shownDigits, TEST_PANS } from '../support/card-spellings';
import { ordinaryValues } from '../support/ordinary-values';

/**
 * The one detector by shape (decision 0135): Unicode's digits, separators and invisible characters, escapes of
 * escapes, text in each encoding, and its false positives measured on ordinary values. Whether a text still
 * reveals a number is judged by test/support/card-spellings.ts, independent of src/.
 */

describe('the digits of every script (decision 0135)', () => {
  it('DIGIT_ZEROS gives every \\p{Nd} code point its value, and no other code point one', () => {
    const wrong: string[] = [];
    let run = 0;
    for (let cp = 0; cp < 0x110000; cp++) {
      const nd = /\p{Nd}/u.test(String.fromCodePoint(cp));
      // Unicode's digits come in runs of ten from 0: the value is the place in the run.
      const expected = nd ? run % 10 : -1;
      run = nd ? run + 1 : 0;
      if (digitValue(cp) !== expected) wrong.push(`U+${cp.toString(16)}: ${digitValue(cp)}, not ${expected}`);
    }
    expect(wrong).toEqual([]);
    expect(DIGIT_ZEROS.length).toBeGreaterThanOrEqual(70);
  });
});

describe('every spelling of the corpus (decision 0135)', () => {
  it(`holds at least 300 (number × spelling) entries, each a number its reader sees (${CORPUS.length})`, () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(300);
    expect(CORPUS.filter(({ text, pan }) => !reveals(text, pan)).map((c) => c.name)).toEqual([]);
  });

  it.each([
    ['JSON', (t: string) => `{"pan":"${t}","n":1}`],
    ['XML', (t: string) => `<card><pan>${t}</pan></card>`],
    ['a URL path', (t: string) => `https://psp.example/v1/cards/${t}/tokens?x=1`],
    ['a log line', (t: string) => `INFO card ${t} declined`],
  ])('finds and masks each spelling in %s, keeping at most 6 + 4 digits', (_, wrap) => {
    const missed = CORPUS.filter(({ text, pan }) => {
      const masked = maskCardNumbers(wrap(text));
      return reveals(masked, pan) || shownDigits(masked) - shownDigits(wrap('')) > (pan.length >= 15 ? 10 : 4);
    });
    expect(missed.map(({ pan, name }) => `${pan} ${name}`)).toEqual([]);
  });

  it('reads path segments and percent-encoding of any depth', () => {
    for (const text of [
      '/cards/4111/1111/1111/1111/x',
      '/cards/4111%2F1111%2F1111%2F1111',
      '/cards/%2534%2531%2531%2531111111111111',
      `/cards/${'%25'.repeat(5)}34111111111111111`,
    ]) {
      expect(findCardNumbers(text).map((f) => f.digits)).toEqual(['4111111111111111']);
    }
  });
});

describe('ordinary values are not card numbers (decision 0135)', () => {
  /** The bound the rate stays under: one value in a hundred (see the decision for what remains). */
  const MAX_RATE = 0.01;

  it('a false-positive corpus of ordinary values: the rate printed, under the bound', () => {
    const values = ordinaryValues(40);
    expect(values.length).toBeGreaterThanOrEqual(1000);
    // None of them holds a test number: what the detector finds there is a false positive.
    expect(values.filter((v) => TEST_PANS.some((pan) => reveals(v.text, pan)))).toEqual([]);
    const positives = values.filter((v) => holdsCardNumber(v.text));
    const byKind: Record<string, number> = {};
    for (const p of positives) byKind[p.kind] = (byKind[p.kind] ?? 0) + 1;
    const rate = positives.length / values.length;
    console.log(
      `card-number false positives: ${positives.length} of ${values.length} ordinary values (${(rate * 100).toFixed(2)} %)`,
      byKind,
    );
    expect(rate).toBeLessThan(MAX_RATE);
  });

  it('a migration’s name with its millisecond timestamp is not masked in the start-up log; a card glued to a name is', () => {
    const line = 'Migration CheckoutSessions1763917200000 has been executed successfully.';
    expect(maskCardNumbers(line)).toBe(line);
    expect(maskCardNumbers('1763917200000')).toBe('1763917200000');
    expect(maskCardNumbers('{"t":1763917200000123}')).toBe('{"t":1763917200000123}');
    expect(maskCardNumbers('card4111111111111111')).toBe('card411111******1111');
    // A 13-digit Visa number begins with 4: outside the timestamps' range.
    expect(maskCardNumbers('4222222222222')).toBe('*********2222');
  });

  it("a float's fraction is no card number, so a JSON number stays one; a card across periods still is", () => {
    for (const text of [
      '{"score":0.8444218515250481}',
      '[-3.189531083031903e-253]',
      'ratio 12.4111111111111111',
      '{"n":19114442871.64608}',
      '41111111.11111111',
    ])
      expect(maskCardNumbers(text)).toBe(text);
    expect(maskCardNumbers('4111.1111.1111.1111')).toBe('4111.11**.****.1111');
    expect(maskCardNumbers('pan .4111111111111111')).toBe('pan .411111******1111');
  });

  it('ids, dates and lists keep their digits: UUIDs, hex ids, zero-first runs, lists of pairs, IBANs', () => {
    for (const text of [
      '4bf92f3577b34da6a3ce929d0e0e4736',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '0000000000000000',
      '0000000041111111',
      '[22, 71, 19, 31, 85, 16, 97, 9, 37, 25, 61, 56, 40]',
      'DE89 3704 0044 0532 0130 00',
    ]) {
      expect(maskCardNumbers(text)).toBe(text);
    }
    // Leading zeros are a fixed-width field's padding: the number after them is a card.
    expect(maskCardNumbers('PAN=0004111111111111111;')).toBe('PAN=000411111******1111;');
    // Uniform groups joined by spaces are a card printed digit by digit.
    expect(maskCardNumbers('4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1')).toBe('4 1 1 1 1 1 * * * * * * 1 1 1 1');
  });
});

describe('text in its encoding, written back byte for byte (decision 0135)', () => {
  const TEXT =
    'pan 4111 1111 1111 1111 \u0664\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661 é end';
  const MASKED = 'pan 4111 11** **** 1111 \u0664\u0661\u0661\u0661\u0661\u0661******\u0661\u0661\u0661\u0661 é end';

  /** Independent codecs, from the encodings' definitions. */
  const utf32 = (text: string, little: boolean) => {
    const cps = [...text].map((c) => c.codePointAt(0)!);
    const out = Buffer.alloc(cps.length * 4);
    cps.forEach((cp, i) => (little ? out.writeUInt32LE(cp, i * 4) : out.writeUInt32BE(cp, i * 4)));
    return out;
  };
  const fromUtf32 = (bytes: Buffer, little: boolean) =>
    String.fromCodePoint(
      ...Array.from({ length: bytes.length / 4 }, (_, i) =>
        little ? bytes.readUInt32LE(i * 4) : bytes.readUInt32BE(i * 4),
      ),
    );
  const utf16be = (text: string) => Buffer.from(text, 'utf16le').swap16();
  const BOM = '\ufeff';

  const cases: Array<[string, Buffer, string | undefined, (b: Buffer) => string]> = [
    ['UTF-8', Buffer.from(TEXT), 'text/plain; charset=utf-8', (b) => b.toString('utf8')],
    ['UTF-8, BOM, no label', Buffer.from(BOM + TEXT), undefined, (b) => b.toString('utf8')],
    ['UTF-16LE, BOM', Buffer.from(BOM + TEXT, 'utf16le'), undefined, (b) => b.toString('utf16le')],
    ['UTF-16LE, no BOM, no label', Buffer.from(TEXT, 'utf16le'), undefined, (b) => b.toString('utf16le')],
    [
      'UTF-16BE, no BOM, no label',
      utf16be(TEXT),
      'application/json',
      (b) => Buffer.from(b).swap16().toString('utf16le'),
    ],
    [
      'UTF-16LE labelled ISO-8859-1',
      Buffer.from(TEXT, 'utf16le'),
      'text/plain; charset=iso-8859-1',
      (b) => b.toString('utf16le'),
    ],
    [
      'UTF-16BE labelled UTF-8',
      utf16be(BOM + TEXT),
      'text/plain; charset=utf-8',
      (b) => Buffer.from(b).swap16().toString('utf16le'),
    ],
    ['UTF-32LE, BOM', utf32(BOM + TEXT, true), undefined, (b) => fromUtf32(b, true)],
    ['UTF-32LE, no BOM', utf32(TEXT, true), 'text/plain', (b) => fromUtf32(b, true)],
    ['UTF-32BE, BOM', utf32(BOM + TEXT, false), undefined, (b) => fromUtf32(b, false)],
    ['UTF-32BE, no BOM, labelled latin1', utf32(TEXT, false), 'text/plain; charset=latin1', (b) => fromUtf32(b, false)],
  ];

  it.each(cases)('%s: found, masked, and every other byte as it was', (_, bytes, contentType, decode) => {
    const read = readText(bytes, contentType);
    expect(read.encode(read.text).bytes).toBe(bytes);
    const out = read.encode(maskCardNumbers(read.text));
    expect(out.charset).toBeUndefined();
    const before = [...decode(bytes)];
    const after = [...decode(out.bytes)];
    expect(after.join('').replace(BOM, '')).toBe(MASKED);
    // Same characters but masked digits: each changed one was a digit and is now `*`.
    expect(after).toHaveLength(before.length);
    expect(after.filter((c, i) => c !== before[i] && !(c === '*' && /\p{Nd}/u.test(before[i])))).toEqual([]);
    expect(TEST_PANS.filter((pan) => reveals(after.join(''), pan))).toEqual([]);
  });

  it('bytes that are not UTF-8 are read one a character and written back as they were', () => {
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0xe9, 0x20]),
      Buffer.from('4111-1111-1111-1111 \xef\xbc\x94', 'latin1'),
    ]);
    const read = readText(bytes, 'text/plain');
    expect(read.encoding).toBe('latin1');
    const out = read.encode(maskCardNumbers(read.text)).bytes;
    expect(out.toString('latin1')).toBe('\xff\xe9 4111-11**-****-1111 \xef\xbc\x94');
  });

  it('a head cut inside a UTF-8 character: the text read, the cut bytes written back', () => {
    const whole = Buffer.from('x 4111 1111 1111 1111 ４');
    const head = whole.subarray(0, whole.length - 1);
    const read = readText(head, 'text/plain; charset=utf-8');
    expect(read.encoding).toBe('utf8');
    const out = read.encode(maskCardNumbers(read.text)).bytes;
    expect(out.subarray(-2)).toEqual(head.subarray(-2));
    expect(out.toString('latin1')).toContain('4111 11** **** 1111');
  });

  it('ASCII labelled UTF-16 is read as the ASCII it is', () => {
    const read = readText(Buffer.from('{"pan":"4111111111111111"}'), 'application/json; charset=utf-16le');
    expect(maskCardNumbers(read.text)).toBe('{"pan":"411111******1111"}');
  });

  it('a multi-byte legacy charset (Shift_JIS) is read by TextDecoder; masked, it comes back as UTF-8 and says so', () => {
    // ４１１１… in fullwidth digits, Shift_JIS: 0x82 0x4F + digit.
    const sjis = Buffer.from([...'4111111111111111'].flatMap((d) => [0x82, 0x4f + Number(d)]));
    const bytes = Buffer.concat([Buffer.from([0x93, 0xfa]), sjis]);
    const read = readText(bytes, 'text/plain; charset=Shift_JIS');
    expect(read.encoding).toBe('legacy');
    expect(read.encode(read.text)).toEqual({ bytes });
    const out = read.encode(maskCardNumbers(read.text));
    expect(out.charset).toBe('utf-8');
    expect(out.bytes.toString('utf8')).toBe('日４１１１１１******１１１１');
  });
});

describe('linear in the text, whatever it holds (decision 0135)', () => {
  const counted = (run: () => unknown): number => {
    const original = Object.getOwnPropertyDescriptor(String.prototype, 'charCodeAt')!.value as (i: number) => number;
    let reads = 0;
    String.prototype.charCodeAt = function (this: string, i: number) {
      reads++;
      return original.call(this, i);
    };
    try {
      run();
    } finally {
      String.prototype.charCodeAt = original;
    }
    return reads;
  };
  const repeat = (piece: string, length: number) => piece.repeat(Math.ceil(length / piece.length)).slice(0, length);
  const HOSTILE: Array<[string, (n: number) => string]> = [
    ['long runs of separators between groups', (n) => repeat(`4111${' -/\u2009'.repeat(200)}`, n)],
    ['digits with a format character between each', (n) => repeat('4\u200b1\u00ad', n)],
    ['single digits spaced', (n) => repeat('4 1 ', n)],
    ['pairs spaced', (n) => repeat('41 ', n)],
    ['nested %25 chains', (n) => repeat(`${'%25'.repeat(300)}34`, n)],
    ['unfinished %25 chains', (n) => repeat(`%E2${'%25'.repeat(300)}`, n)],
    ['runs of backslashes', (n) => repeat(`1${'\\'.repeat(500)}`, n)],
    ['unfinished references', (n) => repeat('&#1111111&#x3&nbsp', n)],
    ['hex ids with digit runs', (n) => repeat('a411111111111111a ', n)],
    ['astral digits', (n) => repeat('\u{1d7d2}\u{1d7cf}', n)],
  ];

  it.each(HOSTILE)('%s: reads per character stay bounded at 4 times the size', (_, make) => {
    const small = make(64 * 1024);
    const large = make(256 * 1024);
    const a = counted(() => maskCardNumbers(small));
    const b = counted(() => maskCardNumbers(large));
    // Linear: 4 times the text, 4 times the reads (a quadratic reader would read 16 times as much).
    expect(b / a).toBeLessThan(4.5);
    expect(b / large.length).toBeLessThan(128);
  });
});
