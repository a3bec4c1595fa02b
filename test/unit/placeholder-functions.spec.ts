import { execFileSync } from 'node:child_process';
import { MAX_VALUE_LENGTH } from '../../src/modules/vault/placeholders/placeholder-functions';
import {
  filledByteLength,
  fillBytes,
  filledValue,
  fillScan,
  PlaceholderError,
  scanText,
  secretUses,
  substitutePlaceholders,
} from '../../src/modules/vault/placeholders/placeholders';

const NUMBER = '4111111111111111';
const values = new Map([
  ['CARD_NUMBER_1', NUMBER],
  ['CARD_NUMBER_2', '5555555555554444'],
  ['CARD_EXPIRATION_DATE_1', '04/31'],
  ['CARD_EXPIRATION_DATE_2', '12/29'],
  ['CARDHOLDER_NAME_1', 'Zoë 😀 Smith'],
  ['CARDHOLDER_NAME_2', ''],
]);

/** The template filled as a header value would be (no escaping), after the scan accepted it. */
function fill(template: string, with_ = values): string {
  scanText(template, 2);
  return substitutePlaceholders(template, with_);
}

/** The PlaceholderError the scan throws for `template` (two cards listed). */
function refused(template: string): PlaceholderError {
  try {
    scanText(template, 2);
  } catch (error) {
    if (error instanceof PlaceholderError) return error;
    throw error;
  }
  throw new Error(`${template} was accepted`);
}

describe('placeholder functions', () => {
  it.each([
    ['{{ CARD_NUMBER_1 | base64 }}', 'NDExMTExMTExMTExMTExMQ=='],
    ['{{ CARDHOLDER_NAME_1 | base64 }}', Buffer.from('Zoë 😀 Smith').toString('base64')],
    ['{{ CARDHOLDER_NAME_2 | base64 }}', ''],
    ['{{ CARD_NUMBER_1 | hex }}', '34313131313131313131313131313131'],
    ['{{ CARDHOLDER_NAME_1 | hex }}', '5a6fc3ab20f09f988020536d697468'],
    ['{{ CARD_NUMBER_1 | last4 }}', '1111'],
    ['{{ CARDHOLDER_NAME_1 | last4 }}', 'mith'],
    ['{{ CARDHOLDER_NAME_2 | last4 }}', ''],
    ['{{ CARD_EXPIRATION_DATE_1 | last4 | last4 }}', '4/31'],
    ['{{ CARD_NUMBER_2 | bin }}', '555555'],
    ['{{ CARD_NUMBER_2 | bin(8) }}', '55555555'],
    ['{{ CARD_EXPIRATION_DATE_1 | bin }}', '04/31'],
    ['{{ CARD_EXPIRATION_DATE_1 | pad_left(8, "0") }}', '00004/31'],
    ['{{ CARD_NUMBER_1 | pad_left(4, "0") }}', NUMBER],
    ['{{ CARDHOLDER_NAME_2 | pad_left(3, " ") }}', '   '],
    ['{{ CARD_NUMBER_1 | last4 | pad_left(16, "*") }}', '************1111'],
    ['{{ CARD_NUMBER_1|last4|pad_left( 6 ,"ü" ) }}', 'üü1111'],
    ['{{ CARD_EXPIRATION_DATE_1 | date("MMYY") }}', '0431'],
    ['{{ CARD_EXPIRATION_DATE_2 | date("YYYY-MM") }}', '2029-12'],
    ['{{ CARD_EXPIRATION_DATE_1 | date("M/YY") }}', '4/31'],
    ['{{ CARD_EXPIRATION_DATE_1 | date("MM.YYYY") | base64 }}', Buffer.from('04.2031').toString('base64')],
    // FIPS 180-2's vector is "abc"; here the value as UTF-8 bytes.
    ['{{ CARD_NUMBER_1 | sha256 }}', '9bbef19476623ca56c17da75fd57734dbf82530686043a6e491c6d71befe8f6e'],
    ['{{ CARDHOLDER_NAME_2 | sha256 }}', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['{{ CARD_NUMBER_1 | hex | base64 | raw }}', Buffer.from(Buffer.from(NUMBER).toString('hex')).toString('base64')],
  ])('%s → %s', (template, expected) => {
    expect(fill(template)).toBe(expected);
  });

  it('or: the first alternative whose value is not empty, then the functions on it', () => {
    expect(fill('{{ CARDHOLDER_NAME_2 or CARDHOLDER_NAME_1 }}')).toBe('Zoë 😀 Smith');
    expect(fill('{{ CARDHOLDER_NAME_1 or CARD_NUMBER_1 }}')).toBe('Zoë 😀 Smith');
    expect(fill('{{ CARDHOLDER_NAME_2 or CARD_NUMBER_2 | last4 }}')).toBe('4444');
    expect(fill('{{ CARDHOLDER_NAME_2   or   CARDHOLDER_NAME_2 }}')).toBe('');
    expect(fill('{{ CARD_EXPIRATION_DATE_2 or CARD_EXPIRATION_DATE_1 | date("MMYY") }}')).toBe('1229');
    const scan = scanText('{{ CARDHOLDER_NAME_2 or CARD_NUMBER_1 | last4 }}', 2);
    expect(scan.uses.map((u) => u.token)).toEqual(['CARDHOLDER_NAME_2', 'CARD_NUMBER_1']);
    expect(scan.matches[0].key).toBe('CARDHOLDER_NAME_2 or CARD_NUMBER_1 | last4');
  });

  it('an unknown function is refused naming it and its offset, and the known ones', () => {
    const error = refused('{"pan": "{{ CARD_NUMBER_1 | rot13 }}"}');
    expect(error.reason).toBe('unknown-function');
    expect(error.message).toBe(
      '{{ CARD_NUMBER_1 | rot13 }}: unknown function "rot13" at offset 28; ' +
        'known: raw, base64, hex, sha256, hmac_sha256, last4, bin, pad_left, date',
    );
    expect('{"pan": "{{ CARD_NUMBER_1 | rot13 }}"}'.indexOf('rot13')).toBe(28);
  });

  it.each([
    ['{{ CARD_NUMBER_1 | base64(1) }}', 'base64 takes no arguments'],
    ['{{ CARD_NUMBER_1 | bin(7) }}', 'bin takes no argument (6 digits), 6 or 8'],
    ['{{ CARD_NUMBER_1 | bin("6") }}', 'bin takes no argument (6 digits), 6 or 8'],
    ['{{ CARD_NUMBER_1 | pad_left(0, "0") }}', 'argument 1 must be a whole number from 1 to 64'],
    ['{{ CARD_NUMBER_1 | pad_left(65, "0") }}', 'argument 1 must be a whole number from 1 to 64'],
    ['{{ CARD_NUMBER_1 | pad_left(0000000000065, "0") }}', 'argument 1 must be a whole number from 1 to 64'],
    ['{{ CARD_NUMBER_1 | pad_left(6, "ab") }}', 'argument 2 must be one character in quotes'],
    ['{{ CARD_NUMBER_1 | pad_left(6, "") }}', 'argument 2 must be one character in quotes'],
    ['{{ CARD_NUMBER_1 | pad_left(6) }}', 'pad_left takes a length and one character'],
    ['{{ CARD_NUMBER_1 | pad_left(6, SECRET.x) }}', 'argument 2 must be one character in quotes'],
    ['{{ CARD_EXPIRATION_DATE_1 | date("DD/MM") }}', 'the format may hold only YYYY, YY, MM, M'],
    ['{{ CARD_EXPIRATION_DATE_1 | date("") }}', 'the format may hold only'],
    ['{{ CARD_EXPIRATION_DATE_1 | date }}', 'date takes one format in quotes'],
    ['{{ CARD_NUMBER_1 | date("MMYY") }}', 'date applies only to CARD_EXPIRATION_DATE_X'],
    ['{{ CARD_EXPIRATION_DATE_MM_1 | date("MMYY") }}', 'date applies only to CARD_EXPIRATION_DATE_X'],
    ['{{ CARD_EXPIRATION_DATE_1 or CARD_NUMBER_1 | date("MMYY") }}', 'date applies only to CARD_EXPIRATION_DATE_X'],
    ['{{ CARD_EXPIRATION_DATE_1 | last4 | date("MMYY") }}', 'as the first function'],
    ['{{ CARD_NUMBER_1 | raw | hex }}', 'raw must be the last function'],
    ['{{ CARD_NUMBER_1 | hmac_sha256 }}', 'hmac_sha256 takes one secret: hmac_sha256(SECRET.name)'],
    ['{{ CARD_NUMBER_1 | hmac_sha256("key") }}', 'hmac_sha256 takes one secret'],
    ['{{ CARD_NUMBER_1 | hmac_sha256(1) }}', 'hmac_sha256 takes one secret'],
    ['{{ CARD_NUMBER_1 | hmac_sha256(SECRET.a, SECRET.b) }}', 'hmac_sha256 takes one secret'],
    ['{{ CARD_NUMBER_1 | hex | hex | hex | hex | hex | hex | hex | hex | hex }}', 'at most 8 functions'],
  ])('%s is refused: %s', (template, message) => {
    const error = refused(template);
    expect(error.reason).toBe('bad-arguments');
    expect(error.message).toContain(message);
  });

  it.each([
    ['{{ CARD_NUMBER_1 | }}', 'expected a function name after "|" at offset 19'],
    ['{{ CARD_NUMBER_1 |', 'expected a function name after "|" at offset 18'],
    ['{{ CARD_NUMBER_1 | raw', 'expected "|", "or" or the closing }} at offset 22'],
    ['{{ CARD_NUMBER_1 | raw }', 'expected "|", "or" or the closing }} at offset 23'],
    ['{{ CARD_NUMBER_1 | Base64 }}', 'expected a function name after "|" at offset 19'],
    ['{{ CARD_NUMBER_1 | pad_left(6, "0" }}', 'expected "," or ")" in the arguments at offset 35'],
    ['{{ CARD_NUMBER_1 | pad_left(6, "{") }}', 'unterminated or invalid string argument at offset 32'],
    ["{{ CARD_NUMBER_1 | pad_left(6, '0') }}", 'expected an argument'],
    ['{{ CARD_NUMBER_1 | pad_left(,) }}', 'expected an argument'],
    ['{{ CARD_NUMBER_1 | hmac_sha256(SECRET.) }}', 'expected a secret name after SECRET.'],
    ['{{ CARD_NUMBER_1 or }}', 'expected NAME_X after "or" at offset 20'],
    ['{{ CARD_NUMBER_1 or card_number_2 }}', 'expected NAME_X after "or"'],
    ['{{ CARD_NUMBER_1 | last4 or CARD_NUMBER_2 }}', 'expected "|", "or" or the closing }}'],
  ])('%s is a half-written placeholder: %s', (template, message) => {
    const error = refused(template);
    expect(error.reason).toBe('malformed');
    expect(error.message).toContain('{{ CARD_NUMBER_1 … at offset 0 is not a complete placeholder');
    expect(error.message).toContain(message);
  });

  it('an escaped half-written expression is text, sent with its backslash; other text stays as it was', () => {
    for (const text of [
      '\\{{ CARD_NUMBER_1 | }}',
      '{{ CARD_NUMBER_1 orange }}',
      '{{ CARD_NUMBER_1 or}}',
      '{{ card_1 | raw }}',
    ]) {
      expect(scanText(text, 2).uses).toEqual([]);
      expect(substitutePlaceholders(text, values)).toBe(text);
    }
    expect(fill('\\{{ CARD_NUMBER_1 | last4 }} {{ CARD_NUMBER_1 | last4 }}')).toBe('{{ CARD_NUMBER_1 | last4 }} 1111');
  });

  it('names, positions and the security code are checked in every alternative', () => {
    expect(refused('{{ CARD_NUMBER_1 or CARD_NUMBER_3 | last4 }}').message).toBe(
      '{{ CARD_NUMBER_3 }} refers to position 3, but x-vault-forward-payment-methods lists 2',
    );
    expect(refused('{{ CARD_NUMBER_1 or CARD_NUMBR_2 }}').reason).toBe('unknown-name');
    expect(refused('{{ CARDHOLDER_NAME_1 or CARD_SECURITY_CODE_1 }}').reason).toBe('not-available');
  });

  it('a value grown past the bound is refused when filled, naming the placeholder and no value', () => {
    const long = 'N'.repeat(200);
    const scan = scanText(
      '{{ CARDHOLDER_NAME_1 | hex | hex | hex | hex }} {{ CARDHOLDER_NAME_1 | hex | hex | hex | hex | hex }}',
      1,
    );
    const named = new Map([['CARDHOLDER_NAME_1', long]]);
    expect(filledValue(scan.matches[0], named, 'none')).toHaveLength(3200);
    let thrown: unknown;
    try {
      filledValue(scan.matches[1], named, 'none');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PlaceholderError);
    expect((thrown as Error).message).toBe(
      `{{ CARDHOLDER_NAME_1 | hex | hex | hex | hex | hex }}: hex would make the value longer than ${MAX_VALUE_LENGTH} characters`,
    );
  });

  it('the result is escaped for the body after the functions, unless it ends in raw', () => {
    const scan = scanText(
      '{{ CARDHOLDER_NAME_1 | pad_left(3, "&") }}{{ CARDHOLDER_NAME_1 | pad_left(3, "&") | raw }}',
      1,
    );
    const short = new Map([['CARDHOLDER_NAME_1', 'O']]);
    expect(filledValue(scan.matches[0], short, 'xml')).toBe('&amp;&amp;O');
    expect(filledValue(scan.matches[0], short, 'form')).toBe('%26%26O');
    expect(filledValue(scan.matches[1], short, 'form')).toBe('&&O');
  });
});

describe('{% if %} blocks (one level, no loops)', () => {
  const named = new Map([
    ['CARDHOLDER_NAME_1', 'Ada'],
    ['CARDHOLDER_NAME_2', ''],
    ['CARD_NUMBER_1', NUMBER],
    ['CARD_NUMBER_2', '5555555555554444'],
  ]);
  const filled = (template: string) => fill(template, named);

  it.each([
    ['{% if CARDHOLDER_NAME_1 %}name={{ CARDHOLDER_NAME_1 }}{% else %}none{% endif %}', 'name=Ada'],
    ['{% if CARDHOLDER_NAME_2 %}name={{ CARDHOLDER_NAME_2 }}{% else %}none{% endif %}', 'none'],
    ['a{% if CARDHOLDER_NAME_2 %}X{% endif %}b', 'ab'],
    ['a{%if CARDHOLDER_NAME_1%}X{%endif%}b', 'aXb'],
    ['a{%   if   CARDHOLDER_NAME_2 or CARDHOLDER_NAME_1   %}X{%  else  %}Y{%  endif  %}b', 'aXb'],
    ['{% if CARDHOLDER_NAME_2 %}{{ CARD_NUMBER_1 }}{% else %}{{ CARD_NUMBER_2 | last4 }}{% endif %}', '4444'],
    ['{% if CARD_NUMBER_1 %}1{% endif %}{% if CARDHOLDER_NAME_2 %}2{% else %}3{% endif %}', '13'],
    // An escaped if opens no block, so its endif is text too (an endif outside an if is not a tag).
    ['\\{% if CARD_NUMBER_1 %}x{% endif %}', '{% if CARD_NUMBER_1 %}x{% endif %}'],
    ['\\{% if CARD_NUMBER_1 %}x\\{% endif %}', '{% if CARD_NUMBER_1 %}x\\{% endif %}'],
    [
      '{% if CARDHOLDER_NAME_2 %}\\{{ CARD_NUMBER_1 }}{% else %}\\{{ CARD_NUMBER_2 }}{% endif %}',
      '{{ CARD_NUMBER_2 }}',
    ],
    // Another template language's tags, and ours outside an if, are text.
    ['{% if name %}x{% endif %}', '{% if name %}x{% endif %}'],
    ['{% endif %}{% else %}{%%}{% IF CARD_NUMBER_1 %}', '{% endif %}{% else %}{%%}{% IF CARD_NUMBER_1 %}'],
    ['{{% if CARDHOLDER_NAME_2 %}x{% endif %}', '{'],
  ])('%s → %s', (template, expected) => {
    expect(filled(template)).toBe(expected);
  });

  it('fills bytes of exactly the length it predicts, the branch chosen by the encoded condition', () => {
    const text = 'x{% if CARDHOLDER_NAME_2 %}AAAA{{ CARD_NUMBER_1 }}{% else %}é{{ CARD_NUMBER_1 | last4 }}{% endif %}y';
    const scan = scanText(text, 2);
    const encoded = new Map(scan.matches.map((m) => [m.key, Buffer.from(filledValue(m, named, 'none'))]));
    const bytes = fillBytes(Buffer.from(text, 'latin1'), scan, encoded);
    expect(bytes.toString('latin1')).toBe('xé1111y');
    expect(filledByteLength(scan, encoded)).toBe(bytes.length);
    expect(scan.uses.map((u) => u.token)).toEqual(['CARDHOLDER_NAME_2', 'CARD_NUMBER_1', 'CARD_NUMBER_1']);
  });

  it.each([
    ['{% if CARD_NUMBER_1 %}{% if CARD_NUMBER_2 %}{% endif %}{% endif %}', 'an if inside an if is not supported'],
    ['{% if CARD_NUMBER_1 %}a{% else %}b{% else %}c{% endif %}', 'a second else'],
    ['{% if CARD_NUMBER_1 %}a', 'no {% endif %} closes this if'],
    ['{% if CARD_NUMBER_1 x %}a{% endif %}', 'expected "or" or the closing %}'],
    ['{% if CARD_NUMBER_1 | hex %}a{% endif %}', 'expected "or" or the closing %}'],
    ['{% if CARD_NUMBER_1 or %}a{% endif %}', 'expected NAME_X after "or"'],
  ])('%s is refused: %s', (template, message) => {
    const error = refused(template);
    expect(error.reason).toBe('malformed');
    expect(error.message).toContain(message);
  });

  it('the condition is checked like a placeholder', () => {
    expect(refused('{% if CARD_NUMBR_1 %}x{% endif %}').reason).toBe('unknown-name');
    expect(refused('{% if CARD_NUMBER_1 or CARD_NUMBER_3 %}x{% endif %}').message).toContain('refers to position 3');
  });
});

/** `openssl dgst -sha256 -hmac KEY` over `data`: an implementation independent of node:crypto's createHmac use here. */
function opensslHmac(key: string, data: string): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', key], { input: Buffer.from(data, 'utf8') });
  return out.toString('latin1').trim().split('= ').pop()!;
}

describe('hmac_sha256(SECRET.name) (decision 0102)', () => {
  const RFC_4231_DATA = 'what do ya want for nothing?';
  const withData = new Map([...values, ['CARDHOLDER_NAME_2', RFC_4231_DATA]]);

  /** The template filled as a header value, with these template secrets. */
  function fillWith(template: string, secrets: Map<string, Buffer>, encoding: 'none' | 'json' = 'none'): string {
    const scan = scanText(template, 2);
    return fillScan(scan, (m) => filledValue(m, withData, encoding, secrets));
  }
  const secret = (key: string) => new Map([['k', Buffer.from(key, 'utf8')]]);

  it('is RFC 4231 test case 2 (key "Jefe"), as lower-case hex', () => {
    expect(fillWith('{{ CARDHOLDER_NAME_2 | hmac_sha256(SECRET.k) }}', secret('Jefe'))).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it.each([
    ['an ASCII key over a card number', 'whsec_5f2b', 'CARD_NUMBER_1', NUMBER],
    ['a UTF-8 key over a UTF-8 name', 'clé 😀 ', 'CARDHOLDER_NAME_1', 'Zoë 😀 Smith'],
    ['a key longer than the block (64 bytes)', 'k'.repeat(200), 'CARD_NUMBER_2', '5555555555554444'],
    ['an empty value', 'Jefe', 'CARDHOLDER_NAME_2', ''],
  ])('agrees with openssl: %s', (_, key, token, value) => {
    const vals = new Map([...values, [token, value]]);
    const scan = scanText(`{{ ${token} | hmac_sha256(SECRET.k) }}`, 2);
    const filled = fillScan(scan, (m) => filledValue(m, vals, 'none', secret(key)));
    expect(filled).toBe(opensslHmac(key, value));
    expect(filled).toMatch(/^[0-9a-f]{64}$/);
  });

  it('composes: functions before it change what is signed, functions after it see the 64 hex characters', () => {
    const key = 'Jefe';
    const mac = opensslHmac(key, RFC_4231_DATA);
    expect(fillWith('{{ CARDHOLDER_NAME_2 | hmac_sha256(SECRET.k) | base64 }}', secret(key))).toBe(
      Buffer.from(mac).toString('base64'),
    );
    expect(fillWith('{{ CARDHOLDER_NAME_2 | hmac_sha256(SECRET.k) | last4 }}', secret(key))).toBe(mac.slice(-4));
    expect(fillWith('{{ CARD_NUMBER_1 | last4 | hmac_sha256(SECRET.k) }}', secret(key))).toBe(opensslHmac(key, '1111'));
    expect(fillWith('{{ CARDHOLDER_NAME_2 or CARD_NUMBER_1 | hmac_sha256(SECRET.k) }}', secret(key))).toBe(mac);
    expect(fillWith('{{ CARD_NUMBER_1 | hmac_sha256(SECRET.k) | hmac_sha256(SECRET.k) }}', secret(key))).toBe(
      opensslHmac(key, opensslHmac(key, NUMBER)),
    );
    // Two secrets by name, each its own.
    const two = new Map([
      ['a', Buffer.from('one')],
      ['b-2', Buffer.from('two')],
    ]);
    expect(
      fillWith('{{ CARD_NUMBER_1 | hmac_sha256(SECRET.a) }}.{{ CARD_NUMBER_1 | hmac_sha256(SECRET.b-2) }}', two),
    ).toBe(`${opensslHmac('one', NUMBER)}.${opensslHmac('two', NUMBER)}`);
  });

  it('a secret the fill is not given is refused naming it, never with a value', () => {
    let error: unknown;
    try {
      fillWith('{{ CARD_NUMBER_1 | hmac_sha256(SECRET.other) }}', secret('Jefe'));
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(PlaceholderError);
    expect((error as PlaceholderError).message).toContain('SECRET.other is not held by a method listed');
    expect((error as PlaceholderError).message).not.toContain('Jefe');
    expect((error as PlaceholderError).message).not.toContain(NUMBER);
  });

  it('secretUses lists each SECRET.name of the unescaped placeholders with its placeholder and offset', () => {
    const text =
      '{"a": "{{ CARD_NUMBER_1 | hmac_sha256(SECRET.k) }}", "b": "\\\\{{ CARD_NUMBER_1 | hmac_sha256(SECRET.x) }}"}';
    const scan = scanText(text, 2, 'json');
    expect(secretUses(scan)).toEqual([
      { name: 'k', placeholder: '{{ CARD_NUMBER_1 | hmac_sha256(SECRET.k) }}', at: text.indexOf('hmac_sha256') },
    ]);
    expect(secretUses(scanText('{{ CARD_NUMBER_1 | last4 }}', 2))).toEqual([]);
  });
});
