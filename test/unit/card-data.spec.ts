import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import fc from 'fast-check';
import { withoutAuthenticationData } from '../../src/platform/card-data/authentication-data';
import { findCardNumbers, holdsCardNumber, maskCardNumbers } from '../../src/platform/card-data/card-numbers';
import { decodeText, encodeText, textEncodingOf } from '../../src/platform/card-data/text-encodings';
import { keptText } from '../../src/modules/forwarding/record-bodies/body-capture';
import { CORPUS, reveals, SECURITY_CODE_SPELLINGS, shownDigits, spellings, TEST_PANS } from '../support/card-spellings';
import { authenticationDataText, cardNumberText } from '../support/hostile-inputs';

describe('the one card-number detector (decision 0112)', () => {
  it(`finds and masks every spelling of the corpus (${CORPUS.length} spellings), keeping at most 6 + 4 digits`, () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
    const missed = CORPUS.filter(({ text, pan }) => {
      const masked = maskCardNumbers(`before ${text} after`);
      return reveals(masked, pan) || shownDigits(masked) > (pan.length >= 15 ? 10 : 4);
    });
    expect(missed.map(({ pan, name }) => `${pan} ${name}`)).toEqual([]);
  });

  it('finds every spelling of the corpus after a long stretch with no digit, or a short one, as well as alone', () => {
    // Between numbers the detector jumps to the next character that may begin a digit: the jump must miss none.
    for (const gap of ['', 'x', 'x'.repeat(31), 'x'.repeat(33), 'ab cd '.repeat(40), '\u00e9'.repeat(50)]) {
      const missed = CORPUS.filter(({ text, pan }) => {
        const found = findCardNumbers(`${gap}${text}${gap}`);
        const alone = findCardNumbers(text);
        const shift = gap.length;
        const same =
          found.length === alone.length &&
          found.every(
            (f, i) =>
              f.digits === alone[i].digits &&
              f.spans.every(([a, b], k) => a - shift === alone[i].spans[k][0] && b - shift === alone[i].spans[k][1]),
          );
        return !same || !found.some((f) => f.digits === pan);
      });
      expect({ gap: gap.length, missed: missed.map(({ pan, name }) => `${pan} ${name}`) }).toEqual({
        gap: gap.length,
        missed: [],
      });
    }
  });

  it('changes nothing but the hidden digits', () => {
    expect(maskCardNumbers('card: 4111 1111 1111 1111, ok')).toBe('card: 4111 11** **** 1111, ok');
    expect(
      maskCardNumbers(
        '"\\u0034\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031"',
      ),
    ).toBe('"\\u0034\\u0031\\u0031\\u0031\\u0031\\u0031******\\u0031\\u0031\\u0031\\u0031"');
    expect(maskCardNumbers('<pan>&#x34;&#49;11 1111 1111 1111</pan>')).toBe('<pan>&#x34;&#49;11 11** **** 1111</pan>');
    expect(maskCardNumbers('n=4111+1111+1111+1111&x=1')).toBe('n=4111+11**+****+1111&x=1');
    expect(maskCardNumbers('501800000009')).toBe('********0009');
  });

  it('turns a bare JSON number that is a card into its masked string, digit for digit, never rounded', () => {
    const answer = '{"x":6212345678901234569,"list":[4111111111111111, 2],"n":7}';
    const masked = maskCardNumbers(answer, { bareJson: true });
    expect(masked).toBe('{"x":"621234*********4569","list":["411111******1111", 2],"n":7}');
    expect(JSON.parse(masked)).toEqual({ x: '621234*********4569', list: ['411111******1111', 2], n: 7 });
  });

  it('masks a card inside an XML CDATA section in its place, adding no quotes (a recorded XML body)', () => {
    for (const [text, masked] of [
      ['<pan><![CDATA[4111111111111111]]></pan>', '<pan><![CDATA[411111******1111]]></pan>'],
      ['<pan><![CDATA[ 4111111111111111 ]]></pan>', '<pan><![CDATA[ 411111******1111 ]]></pan>'],
      ['{"xml":"<![CDATA[4111111111111111]]>"}', '{"xml":"<![CDATA[411111******1111]]>"}'],
    ]) {
      expect(maskCardNumbers(text, { bareJson: true })).toBe(masked);
      expect(keptText(text)).toBe(masked);
    }
  });

  it('masks a card that looks like a JSON array but stands in a JSON string, XML or plain text, adding no quotes', () => {
    for (const [text, masked] of [
      ['{"note":"[4111111111111111]"}', '{"note":"[411111******1111]"}'],
      ['{"note":"cards [4111111111111111, 2]"}', '{"note":"cards [411111******1111, 2]"}'],
      ['{"a":"say \\"hi","note":"[4111111111111111]"}', '{"a":"say \\"hi","note":"[411111******1111]"}'],
      ['{"a":"dir\\\\","n":[4111111111111111]}', '{"a":"dir\\\\","n":["411111******1111"]}'],
      ['<pan>[4111111111111111]</pan>', '<pan>[411111******1111]</pan>'],
      [
        '<pans n="2">[4111111111111111, 5555555555554444]</pans>',
        '<pans n="2">[411111******1111, 555555******4444]</pans>',
      ],
      ['cards: [4111111111111111]', 'cards: [411111******1111]'],
    ]) {
      expect(maskCardNumbers(text, { bareJson: true })).toBe(masked);
      expect(keptText(text)).toBe(masked);
    }
  });

  it('property: a JSON document stays JSON of the same shape, a card in a string as `[…]` and as a bare number', () => {
    // Values with no digit run of a card's length of their own: a float's long fraction may be one (Luhn and all).
    const values = fc.jsonValue().filter((value) => !/\d{12}/.test(JSON.stringify(value)));
    fc.assert(
      fc.property(values, fc.constantFrom('[%]', 'x [%, 2]', ':%,', '"%"'), (value, spelling) => {
        const pan = '4111111111111111';
        const text = JSON.stringify({ value, note: spelling.replace('%', pan), n: Number(pan), list: [Number(pan)] });
        const masked = JSON.parse(maskCardNumbers(text, { bareJson: true }));
        expect(masked).toEqual({
          value: JSON.parse(JSON.stringify(value)), // as JSON keeps it (-0 is written 0)
          note: spelling.replace('%', '411111******1111'),
          n: '411111******1111',
          list: ['411111******1111'],
        });
      }),
    );
  });

  it('leaves what is not a card number: ids, dates, addresses, long digit runs, Luhn failures', () => {
    for (const text of [
      'c1a34923-4825-4332-8ed5-403c333c7a1d',
      '2026-11-27 12:34:56.789',
      '192.168.100.200',
      '+1 415 555 2671',
      '1'.repeat(25),
      '4111111111111112',
      '41111111111111110', // 17 digits, a valid 16 inside: a run counts whole
      'amount 1234.56',
    ]) {
      expect(maskCardNumbers(text)).toBe(text);
    }
  });

  it('reads UTF-16 text by charset, byte-order mark or shape', () => {
    const text = 'pan 4111 1111 1111 1111 end';
    for (const [encoding, contentType] of [
      ['utf16le', 'text/plain; charset=utf-16le'],
      ['utf16be', 'text/plain; charset=UTF-16BE'],
      ['utf16le', undefined],
      ['utf16be', undefined],
    ] as const) {
      const bytes = encodeText(text, encoding);
      expect(textEncodingOf(bytes, contentType)).toBe(encoding);
      const masked = decodeText(encodeText(maskCardNumbers(decodeText(bytes, encoding)), encoding), encoding);
      expect(masked).toBe('pan 4111 11** **** 1111 end');
    }
    expect(textEncodingOf(Buffer.from('plain ascii body, no NULs'), undefined)).toBe('utf8');
    expect(textEncodingOf(Buffer.from([0x70, 0xe9, 0x20, 0x31]), undefined)).toBe('latin1');
  });

  it('property: a card number in any corpus spelling, amid any text, never survives the mask', () => {
    const spelt = TEST_PANS.flatMap((pan) => spellings(pan).map((s) => ({ pan, text: s.text })));
    fc.assert(
      fc.property(
        fc.constantFrom(...spelt),
        fc.stringMatching(/^[a-z"{}:,<>= ]{0,30}$/),
        fc.stringMatching(/^[a-z"{}:,<>= ]{0,30}$/),
        ({ pan, text }, before, after) => !reveals(maskCardNumbers(`${before}${text}${after}`), pan),
      ),
      { numRuns: 500 },
    );
  });

  it('property: text without a card number comes back unchanged', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => holdsCardNumber(text) || maskCardNumbers(text) === text),
      { numRuns: 500 },
    );
  });

  // Its CPU, a quarter against the whole, is measured by `npm run bench:linear`; here the large text once.
  it('reads 20,000 pieces of card numbers, digit runs and encoded digits, and finds each card number', () => {
    expect(findCardNumbers(cardNumberText(20_000)).length).toBeGreaterThanOrEqual(Math.ceil(20_000 / 3));
  });
});

describe('sensitive authentication data by field name (decision 0113)', () => {
  const names = [...SECURITY_CODE_SPELLINGS, 'track2', 'pin_block', 'password', 'client_secret'];

  it.each(names)('removes the value of %s in JSON, XML and form bodies', (name) => {
    expect(withoutAuthenticationData(`{"card":{"${name}": "737","n":1}}`)).toBe(
      `{"card":{"${name}": "[Redacted]","n":1}}`,
    );
    expect(withoutAuthenticationData(`{"${name}":737}`)).toBe(`{"${name}":"[Redacted]"}`);
    expect(withoutAuthenticationData(`<card><${name}>737</${name}><n>1</n></card>`)).toBe(
      `<card><${name}>[Redacted]</${name}><n>1</n></card>`,
    );
    expect(withoutAuthenticationData(`<card ${name}="737"/>`)).toBe(`<card ${name}="[Redacted]"/>`);
    expect(withoutAuthenticationData(`a=1&${name}=737&b=2`)).toBe(`a=1&${name}=[Redacted]&b=2`);
  });

  it('reads bracketed form names, namespaced elements, and leaves other fields alone', () => {
    expect(withoutAuthenticationData('card[cvc]=737&card%5Bcvc%5D=737')).toBe(
      'card[cvc]=[Redacted]&card%5Bcvc%5D=[Redacted]',
    );
    expect(withoutAuthenticationData('<ns2:cvv>737</ns2:cvv>')).toBe('<ns2:cvv>[Redacted]</ns2:cvv>');
    // A request echoed back as a JSON string inside the answer.
    expect(withoutAuthenticationData(JSON.stringify({ echo: JSON.stringify({ n: 1, cvv: '737' }) }))).toBe(
      '{"echo":"{\\"n\\":1,\\"cvv\\":\\"[Redacted]\\"}"}',
    );
    const other = '{"code":"737","civic":"x","pinned":true}&cvvx=1';
    expect(withoutAuthenticationData(other)).toBe(other);
  });

  // Its CPU, a quarter against the whole, is measured by `npm run bench:linear`; here the large text once.
  it('reads hostile shapes to the end: 80,000 unclosed fields of each kind', () => {
    const text = authenticationDataText(80_000);
    expect(withoutAuthenticationData(text)).toContain('[Redacted]');
  });
});

describe('withheld values (decision 0113)', () => {
  it('removes a short value only where it stands alone, a long one wherever it is', () => {
    expect(keptText('{"cvv":"737","amount":17370,"ref":"A737","note":"737"}', ['737'])).toBe(
      '{"cvv":"[Redacted]","amount":17370,"ref":"A[Redacted]","note":"[Redacted]"}',
    );
    expect(keptText('x=secret-value-123&y', ['secret-value-123'])).toBe('x=[Redacted]&y');
  });
});

describe('one card-number pattern in src/ (decision 0112)', () => {
  const SRC = resolve(__dirname, '../../src');
  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? sources(path) : name.endsWith('.ts') ? [path] : [];
    });

  it('no file but platform/card-data/card-numbers.ts holds a pattern or a check for a card number', () => {
    // A quantifier of 12 to 19 (\d{13,19}, [0-9]{12,}, {12,18}), a digit-run guard, a Luhn function or its sum.
    const PATTERN = /\{1[2-9],\s*(1?\d)?\}|\(\?<!\\d\)|function\s+\w*luhn|%\s*10\s*===?\s*0/i;
    const offenders = sources(SRC)
      .filter((path) => !path.endsWith(join('card-data', 'card-numbers.ts')))
      .flatMap((path) =>
        readFileSync(path, 'utf8')
          .split('\n')
          .map((line, i) => ({ line, at: `${relative(SRC, path)}:${i + 1}` }))
          .filter(({ line }) => PATTERN.test(line)),
      )
      .map(({ at, line }) => `${at}: ${line.trim()}`);
    expect(offenders).toEqual([]);
  });
});
