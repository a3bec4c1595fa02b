import fc from 'fast-check';
import { ConfigError, loadConfig } from '../../src/platform/config/config';
import { type EscapeStyle, findPlaceholders } from '../../src/modules/vault/placeholders/placeholder-grammar';
import {
  filledByteLength,
  fillBytes,
  fillScan,
  filledValue,
  PlaceholderError,
  scanText,
  secretUses,
} from '../../src/modules/vault/placeholders/placeholders';
import {
  densePlaceholders,
  fillSubstituted,
  HMAC_EXPRESSION,
  hmacExpressions,
  matchAll,
  MIB,
  PLACEHOLDER_INPUTS,
  scanUntilRefused,
  SUBSTITUTED,
} from '../support/hostile-inputs';
import { fillBody, fillHeaderValue } from '../support/placeholder-fill';

/**
 * The grammar as regular expressions (docs/placeholders.md gives the first): the reference the
 * single-pass scanner must agree with, on inputs small enough for their backtracking. `FULL` is a whole
 * placeholder, `COMMITTED` the start of an expression (`{{ NAME_X |` or `{{ NAME_X or `) that is not one.
 */
const T = '[A-Z][A-Z0-9_]*_[0-9]+';
const ARG = '(?:[0-9]+|"[^"\\\\{}\\x00-\\x1f\\x7f-\\x9f]*"|SECRET\\.[A-Za-z0-9_-]+)';
const CALL = `[a-z][a-z0-9_]*(?: *\\( *${ARG}(?: *, *${ARG})* *\\))?`;
const REFERENCE = new RegExp(
  `(\\\\*)\\{\\{ *(?:(${T}(?: +or +${T})*(?: *\\| *${CALL})*) *\\}\\}|(${T})(?= +or | *\\|))`,
  'g',
);
const ESCAPE: Record<EscapeStyle, number> = { raw: 1, json: 2 };
const TOKEN = /^([A-Z][A-Z0-9_]*)_([0-9]+)$/;

interface ReferenceMatch {
  /** The first NAME_X. */
  token: string;
  /** The whole expression (FULL), or null for a half-written one (COMMITTED). */
  key: string | null;
  escaped: boolean;
  whole: string;
  backslashes: string;
}

function referenceMatches(text: string, style: EscapeStyle): ReferenceMatch[] {
  return [...text.matchAll(REFERENCE)]
    .map((m) => ({
      token: m[2] ? /^[A-Z][A-Z0-9_]*_[0-9]+/.exec(m[2])![0] : m[3],
      key: m[2] ?? null,
      escaped: m[1].length >= ESCAPE[style],
      whole: m[0],
      backslashes: m[1],
    }))
    .filter((m) => m.key !== null || !m.escaped); // an escaped half-written expression is text
}

function referenceTokens(text: string, style: EscapeStyle): Array<[string, boolean, boolean]> {
  return referenceMatches(text, style).map((m) => [m.token, m.escaped, m.key === null]);
}

function referenceFill(text: string, style: EscapeStyle, value: (key: string) => string): string {
  return text.replace(REFERENCE, (whole, backslashes: string, key: string | undefined) => {
    if (key === undefined) return whole;
    return backslashes.length >= ESCAPE[style] ? whole.slice(ESCAPE[style]) : `${backslashes}${value(key)}`;
  });
}

const CALL_AT = new RegExp(` *\\| *([a-z][a-z0-9_]*)(?: *\\( *(${ARG}(?: *, *${ARG})*) *\\))?`, 'y');
const ARGUMENT_AT = new RegExp(` *(?:([0-9]+)|"([^"]*)"|SECRET\\.([A-Za-z0-9_-]+)) *,?`, 'y');

/**
 * What scanText should refuse in a whole expression, by the documented rules, for the names and
 * functions the generator can write (REFERENCE_NAMES; hex, raw, pad_left, hmac_sha256): the bad
 * NAME_X, or the expression for a bad function; null when it is fine.
 */
const REFERENCE_NAMES = [
  'CARD_NUMBER',
  'CARDHOLDER_NAME',
  'CARD_NETWORK_TOKEN',
  'CARD_NETWORK_TOKEN_OR_EMPTY_STRING',
  'CARD_NETWORK_TOKEN_EXPIRATION_DATE_MMYY_OR_EMPTY_STRING',
  'CARD_CRYPTOGRAM',
  'CARD_CRYPTOGRAM_OR_EMPTY_STRING',
  'CARD_3DS_CAVV_OR_EMPTY_STRING',
  'CARD_3DS_DS_TRANSACTION_ID_OR_EMPTY_STRING',
];

function referenceProblem(key: string, count: number): string | null {
  const pipe = key.indexOf('|');
  const alternatives = (pipe < 0 ? key : key.slice(0, pipe)).trimEnd();
  for (const token of alternatives.split(/ +or +/)) {
    const [, name, digits] = TOKEN.exec(token)!;
    const badPosition = Number(digits) < 1 || Number(digits) > count || digits.startsWith('0');
    if (!REFERENCE_NAMES.includes(name) || badPosition) return token;
  }
  const calls: Array<{ name: string; args: Array<{ number?: string; text?: string; secret?: string }> | null }> = [];
  CALL_AT.lastIndex = alternatives.length;
  for (let m = CALL_AT.exec(key); m; m = CALL_AT.exec(key)) {
    const args: Array<{ number?: string; text?: string; secret?: string }> = [];
    ARGUMENT_AT.lastIndex = 0;
    for (let a = ARGUMENT_AT.exec(m[2] ?? ''); a && m[2] !== undefined && a[0] !== ''; a = ARGUMENT_AT.exec(m[2])) {
      args.push({ number: a[1], text: a[2], secret: a[3] });
    }
    calls.push({ name: m[1], args: m[2] === undefined ? null : args });
  }
  if (calls.length > 8) return key;
  const fine = ({ name, args }: (typeof calls)[number], index: number) =>
    (name === 'hex' && args === null) ||
    (name === 'hmac_sha256' && args?.length === 1 && args[0].secret !== undefined) ||
    (name === 'raw' && args === null && index === calls.length - 1) ||
    (name === 'pad_left' &&
      args?.length === 2 &&
      args[0].number !== undefined &&
      args[0].number.length <= 3 &&
      Number(args[0].number) >= 1 &&
      Number(args[0].number) <= 64 &&
      args[1].text !== undefined &&
      [...args[1].text].length === 1);
  return calls.every(fine) ? null : key;
}

/**
 * Each test reads a megabyte of hostile text once, in milliseconds when the scanner is linear; a quadratic
 * one takes minutes there, so the test's deadline fails it (and Stryker counts such a mutant as timed out).
 * The CPU cost itself, a quarter against the whole, is measured by `npm run bench:linear`.
 */
const DEADLINE_MS = 20_000;

describe('placeholder scanning and filling read a megabyte of hostile text to the end', () => {
  it.each(PLACEHOLDER_INPUTS)(
    'scans 1 MiB of %s, in both escape styles',
    (_, make) => {
      const text = make(MIB);
      for (const style of ['raw', 'json'] as const) {
        // In text order, none overlapping the last: one pass, never back over what it read.
        const found = findPlaceholders(text, style);
        expect(found.every((m, i) => m.start >= (i === 0 ? 0 : found[i - 1].end) && m.end <= text.length)).toBe(true);
        scanUntilRefused(text, style);
      }
    },
    DEADLINE_MS,
  );

  it(
    'scans and fills 1 MiB of whole hmac_sha256(SECRET.name) expressions',
    () => {
      const secrets = new Map([['k', Buffer.from('key')]]);
      const text = hmacExpressions(MIB);
      for (const style of ['raw', 'json'] as const) {
        scanUntilRefused(text, style);
        const scan = scanText(text, 1, style);
        expect(secretUses(scan)).toHaveLength(Math.floor(MIB / HMAC_EXPRESSION.length));
        // As the executor fills: each distinct expression once, then the bytes.
        const values = new Map<string, Buffer>();
        for (const m of scan.matches)
          if (!values.has(m.key)) values.set(m.key, Buffer.from(filledValue(m, SUBSTITUTED, 'none', secrets)));
        expect(values.size).toBe(1);
        const filled = fillBytes(Buffer.from(text, 'latin1'), scan, values);
        expect(filled.length).toBe(filledByteLength(scan, values));
      }
    },
    DEADLINE_MS,
  );

  it.each(PLACEHOLDER_INPUTS)(
    'fills 1 MiB of %s',
    (_, make) => {
      const text = make(MIB);
      for (const style of ['raw', 'json'] as const) {
        const scan = matchAll(text, style);
        const values = new Map(scan.matches.map((m) => [m.key, Buffer.from('4111111111111111')]));
        expect(fillBytes(Buffer.from(text, 'latin1'), scan, values).length).toBe(filledByteLength(scan, values));
        // The values as the executor computes them (filledValue, each distinct one once), on every whole match.
        expect(fillSubstituted(scan, style === 'json' ? 'json' : 'none').length).toBeGreaterThan(0);
        expect(fillScan(scan, (m) => m.key).length).toBeGreaterThan(0);
      }
    },
    DEADLINE_MS,
  );

  it(
    'fills a 1 MiB body dense with placeholders',
    () => {
      const values = new Map([
        ['CARD_NUMBER_1', Buffer.from('4111111111111111')],
        ['CARDHOLDER_NAME_1', Buffer.from('x')],
      ]);
      const text = densePlaceholders(MIB);
      const scan = scanText(text, 1, 'raw');
      expect(scan.matches.filter((m) => !m.escaped)).toHaveLength(Math.floor(MIB / 41));
      expect(fillBytes(Buffer.from(text, 'latin1'), scan, values).length).toBe(filledByteLength(scan, values));
    },
    DEADLINE_MS,
  );
});

describe('the single-pass scanner keeps the grammar exactly', () => {
  // Texts built from the characters that matter to the grammar, so the generator hits its edges.
  const pieces = [
    '{{',
    '}}',
    '{',
    '}',
    ' ',
    '\\',
    '\\\\',
    '_',
    '1',
    '0',
    'A',
    'CARD_NUMBER',
    'CARDHOLDER_NAME',
    'CARD_NETWORK_TOKEN',
    'CARD_CRYPTOGRAM',
    'CARD_3DS_',
    'CAVV',
    '_OR_EMPTY_STRING',
    '_EXPIRATION_DATE_MMYY',
    'X',
    'a',
    '\t',
    '"',
    'é',
    // The expression grammar: pipes, functions with and without arguments, `or`.
    ' | ',
    '|',
    'hex',
    'raw',
    ' or ',
    'or',
    '(',
    ')',
    ',',
    '6',
    'pad_left(6, "*")',
    'SECRET.k',
    'hmac_sha256(SECRET.k)',
  ];
  // Placeholder-like runs built from the grammar's parts, each right or slightly wrong, so that whole and
  // half-written expressions are frequent: random pieces alone seldom write a function with arguments.
  const spaces = fc.constantFrom('', ' ', '  ');
  const token = fc.constantFrom(
    'CARD_NUMBER_1',
    'CARDHOLDER_NAME_2',
    'CARD_NUMBER_01',
    'CARD_NUMBR_1',
    'CARD_NETWORK_TOKEN_1',
    'CARD_NETWORK_TOKEN_OR_EMPTY_STRING_2',
    'CARD_NETWORK_TOKEN_EXPIRATION_DATE_MMYY_OR_EMPTY_STRING_1',
    'CARD_NETWORK_TOKEN_OR_EMPTY_STRIN_1',
    'CARD_NETWORK_TOKEN_OR_EMPTY_STRING',
    'CARD_CRYPTOGRAM_1',
    'CARD_CRYPTOGRAM_OR_EMPTY_STRING_2',
    'CARD_CRYPTOGRAM_OR_EMPTY_STRIN_1',
    'CARD_CRYPTOGRAMS_1',
    'CARD_3DS_CAVV_OR_EMPTY_STRING_1',
    'CARD_3DS_DS_TRANSACTION_ID_OR_EMPTY_STRING_2',
    'CARD_3DS_CAVV_1',
    'A_1_2',
    'card_1',
    'CARD_NUMBER',
  );
  const alternative = fc.tuple(fc.constantFrom(' or ', 'or ', ' or', ' or  ', ' OR '), token).map((p) => p.join(''));
  const argument = fc.constantFrom(
    '6',
    '64',
    '65',
    '007',
    '"*"',
    '"}"',
    '"{"',
    '"|"',
    '","',
    '"',
    '""',
    '"é"',
    'SECRET.k',
    'SECRET.',
    'SECRET.a-B_9',
    'SECRET.k.j',
    "'x'",
    '',
  );
  const argumentList = fc
    .tuple(
      fc.constantFrom('(', ' ('),
      fc.array(argument, { maxLength: 3 }),
      fc.constantFrom(', ', ',', ' , '),
      fc.constantFrom(')', ' )', ''),
    )
    .map(([open, args, comma, close]) => `${open}${args.join(comma)}${close}`);
  const call = fc
    .tuple(
      spaces,
      fc.constantFrom('|', '|', ''),
      spaces,
      fc.constantFrom('hex', 'raw', 'pad_left', 'hmac_sha256', 'Hex', '', 'x1', 'a_b'),
      fc.option(argumentList, { nil: '' }),
    )
    .map((p) => p.join(''));
  const placeholderish = fc
    .tuple(
      fc.constantFrom('', '\\', '\\\\'),
      spaces,
      token,
      fc.array(alternative, { maxLength: 2 }),
      fc.array(call, { maxLength: 3 }),
      spaces,
      fc.constantFrom('}}', '}}', '}', '', '}}}'),
    )
    .map(
      ([bs, sp1, first, alternatives, calls, sp2, close]) =>
        `${bs}{{${sp1}${first}${alternatives.join('')}${calls.join('')}${sp2}${close}`,
    );
  const texts = fc
    .array(fc.oneof(placeholderish, fc.constantFrom(...pieces), fc.constantFrom(...pieces)), { maxLength: 16 })
    .map((parts) => parts.join(''));
  const styles = fc.constantFrom<EscapeStyle>('raw', 'json');

  it('finds the same placeholders, escaped or not, whole or half-written, as the reference regular expressions', () => {
    fc.assert(
      fc.property(texts, styles, (text, style) => {
        const scan = matchAll(text, style);
        expect(scan.matches.map((m) => [m.token, m.escaped, m.malformed !== undefined])).toEqual(
          referenceTokens(text, style),
        );
        expect(scan.matches.filter((m) => !m.malformed).map((m) => m.key)).toEqual(
          referenceMatches(text, style)
            .filter((m) => m.key !== null)
            .map((m) => m.key),
        );
      }),
      { numRuns: 10_000 },
    );
  });

  it('fills to the same text and the same bytes as the reference, and predicts the length', () => {
    fc.assert(
      fc.property(texts, styles, (text, style) => {
        const value = (key: string) => `<${key.toLowerCase()}é>`;
        const expected = referenceFill(text, style, value);
        const scan = matchAll(text, style);
        expect(fillScan(scan, (m) => value(m.key))).toBe(expected);
        const encoded = new Map(scan.matches.map((m) => [m.key, Buffer.from(value(m.key), 'latin1')]));
        expect(filledByteLength(scan, encoded)).toBe(expected.length);
        expect(fillBytes(Buffer.from(text, 'latin1'), scan, encoded).toString('latin1')).toBe(expected);
        if (scan.matches.every((m) => m.key === m.token)) {
          // With each value looked up by its token, as the executor fills a header value.
          const tokens = new Map(scan.matches.map((m) => [m.token, value(m.token)]));
          expect(fillScan(scan, (m) => filledValue(m, tokens, 'none'))).toBe(expected);
        }
      }),
      { numRuns: 10_000 },
    );
  });

  it('refuses the first bad unescaped placeholder in text order: half-written, a name, a position, a function', () => {
    fc.assert(
      fc.property(texts, styles, fc.integer({ min: 0, max: 3 }), (text, style, count) => {
        let expected: string | null = null;
        for (const m of referenceMatches(text, style)) {
          if (m.escaped) continue;
          expected = m.key === null ? m.token : referenceProblem(m.key, count);
          if (expected !== null) break;
        }
        let thrown: string | null = null;
        try {
          scanText(text, count, style);
        } catch (error) {
          if (!(error instanceof PlaceholderError)) throw error;
          thrown = error.token;
        }
        expect(thrown).toBe(expected);
      }),
      { numRuns: 10_000 },
    );
  });

  it('keeps the documented examples', () => {
    const values = new Map([['CARD_NUMBER_1', '4111']]);
    for (const fill of [fillHeaderValue, fillBody]) {
      expect(fill('\\{{ CARD_NUMBER_1 }}', values)).toBe('{{ CARD_NUMBER_1 }}');
      expect(fill('\\\\{{ CARD_NUMBER_1 }}', values)).toBe('\\{{ CARD_NUMBER_1 }}');
      expect(fill('{{   CARD_NUMBER_1  }}{{CARD_NUMBER_1}}', values)).toBe('41114111');
    }
    expect(fillBody('"\\\\{{ CARD_NUMBER_1 }}"', values, 'json')).toBe('"{{ CARD_NUMBER_1 }}"');
    expect(fillBody('"\\\\\\\\{{ CARD_NUMBER_1 }}"', values, 'json')).toBe('"\\\\{{ CARD_NUMBER_1 }}"');
    expect(fillBody('"\\{{ CARD_NUMBER_1 }}"', values, 'json')).toBe('"\\4111"');
    for (const untouched of [
      '{{ card_number_1 }}',
      '{{ CARD_NUMBER }}',
      '{{ 1 }}',
      '{{}}',
      '{"a":{"b":{}}}',
      '{ { CARD_NUMBER_1 } }',
      '{{\tCARD_NUMBER_1}}',
    ]) {
      expect(scanText(untouched, 1).uses).toEqual([]);
      expect(fillHeaderValue(untouched, values)).toBe(untouched);
      expect(fillBody(untouched, values)).toBe(untouched);
    }
    expect(() => scanText('{{ CARD_NUMBER_1_2 }}', 1)).toThrow('is not a placeholder name');
    expect(() => scanText('{{ CARD_NUMBER_01 }}', 1)).toThrow('position 01');
    expect(scanText('\\{{ CARD_NUMBR_1 }}', 0).uses).toEqual([]);
  });
});

describe('the forward memory limits in the configuration', () => {
  it('default to a 2 MiB filled body, 256 MiB in flight per process and 64 MiB per merchant account', () => {
    expect(loadConfig({})).toMatchObject({
      forwardMaxFilledBodyBytes: 2 * MIB,
      forwardMaxInflightBytes: 256 * MIB,
      forwardMaxInflightBytesPerMerchant: 64 * MIB,
    });
    expect(loadConfig({ FORWARD_MAX_INFLIGHT_BYTES: String(16 * MIB) }).forwardMaxInflightBytesPerMerchant).toBe(
      16 * MIB,
    );
  });

  it.each([
    [{ FORWARD_MAX_FILLED_BODY_BYTES: '2MiB' }, 'FORWARD_MAX_FILLED_BODY_BYTES: must be a whole number'],
    [{ FORWARD_MAX_FILLED_BODY_BYTES: '10' }, 'FORWARD_MAX_FILLED_BODY_BYTES: must be between 1024 and'],
    [{ FORWARD_MAX_INFLIGHT_BYTES: '0' }, 'FORWARD_MAX_INFLIGHT_BYTES: must be between 65536 and'],
    [
      { FORWARD_MAX_INFLIGHT_BYTES_PER_MERCHANT: '-1' },
      'FORWARD_MAX_INFLIGHT_BYTES_PER_MERCHANT: must be a whole number',
    ],
    [
      { FORWARD_MAX_INFLIGHT_BYTES: String(MIB), FORWARD_MAX_INFLIGHT_BYTES_PER_MERCHANT: String(2 * MIB) },
      'FORWARD_MAX_INFLIGHT_BYTES_PER_MERCHANT: must not exceed FORWARD_MAX_INFLIGHT_BYTES',
    ],
  ])('refuses %p with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
