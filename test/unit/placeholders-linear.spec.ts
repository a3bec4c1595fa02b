import fc from 'fast-check';
import { ConfigError, loadConfig } from '../../src/config/config';
import {
  filledByteLength,
  fillBytes,
  findPlaceholders,
  type PlaceholderScan,
  jsonStringContent,
  PlaceholderError,
  scanPlaceholders,
  scanText,
  substitutePlaceholders,
  type EscapeStyle,
} from '../../src/vault/placeholders';

/**
 * The grammar as it was first written: a regular expression (docs/placeholders.md gives it). It is
 * the reference the single-pass scanner must agree with, on inputs small enough for its backtracking.
 */
const REFERENCE = /(\\*)\{\{ *([A-Z][A-Z0-9_]*_[0-9]+) *\}\}/g;
const ESCAPE: Record<EscapeStyle, number> = { raw: 1, json: 2 };
const TOKEN = /^([A-Z][A-Z0-9_]*)_([0-9]+)$/;

function referenceTokens(text: string, style: EscapeStyle): Array<[string, boolean]> {
  return [...text.matchAll(REFERENCE)].map((m) => [m[2], m[1].length >= ESCAPE[style]]);
}

function referenceFill(text: string, style: EscapeStyle, value: (token: string) => string): string {
  return text.replace(REFERENCE, (whole, backslashes: string, token: string) =>
    backslashes.length >= ESCAPE[style] ? whole.slice(ESCAPE[style]) : `${backslashes}${value(token)}`,
  );
}

const MIB = 1024 * 1024;
/**
 * Well under the 100 ms, even on a loaded two-core machine. The mutation run instruments every
 * statement (about ten times slower) and raises the budget: a quadratic mutant still takes minutes on
 * 1 MiB, far past it.
 */
const BUDGET_MS = Number(process.env.PLACEHOLDER_TIME_BUDGET_MS ?? 100);

/**
 * Milliseconds of CPU this process spent on `run`, the best of seven. CPU time, not wall time: on a
 * machine busy with other work the wall clock also counts the time this process waited for a core,
 * which says nothing about the scanner. Even CPU time swells under load (GC threads, shared caches: a
 * fill that takes 6–20 ms read 106 ms in a loaded CI run), so the best of seven: a linear pass gets
 * one clean run, a quadratic one takes minutes of CPU on a megabyte and fails every run.
 */
function timed(run: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < 7; i++) {
    const started = process.cpuUsage();
    run();
    const spent = process.cpuUsage(started);
    best = Math.min(best, (spent.user + spent.system) / 1000);
  }
  return best;
}

describe('placeholder scanning and filling are linear in the text', () => {
  const adversarial: Array<[string, string]> = [
    ['backslashes', '\\'.repeat(MIB)],
    ['backslashes then an unterminated {{', `${'\\'.repeat(MIB - 16)}{{ CARD_NUMBER_1`],
    ['{{ runs', '{'.repeat(MIB)],
    ['unterminated {{ with a token', '{{ CARD_NUMBER_1 '.repeat(MIB / 17)],
    ['{{ then spaces, never closed', `{{${' '.repeat(MIB - 2)}`],
    ['{{ then one long token, never closed', `{{ A${'_1'.repeat(MIB / 2 - 2)}`],
    ['backslash runs between {{', '\\\\\\\\{{'.repeat(MIB / 6)],
    ['escaped placeholders', '\\\\{{ CARD_NUMBER_1 }}'.repeat(MIB / 21)],
  ];

  it.each(adversarial)('scans 1 MiB of %s well under 100 ms, in both escape styles', (_, text) => {
    for (const style of ['raw', 'json'] as const) {
      const ms = timed(() => scanPlaceholders(text, 1, style));
      expect(ms).toBeLessThan(BUDGET_MS);
    }
  });

  it.each(adversarial)('fills 1 MiB of %s well under 100 ms', (_, text) => {
    const bytes = Buffer.from(text, 'latin1');
    const values = new Map([['CARD_NUMBER_1', Buffer.from('4111111111111111')]]);
    for (const style of ['raw', 'json'] as const) {
      const scan = scanText(text, 1, style);
      const ms = timed(() => fillBytes(bytes, scan, values));
      expect(ms).toBeLessThan(BUDGET_MS);
      expect(
        timed(() => substitutePlaceholders(text, new Map([['CARD_NUMBER_1', '4111111111111111']]), undefined, style)),
      ).toBeLessThan(BUDGET_MS);
    }
  });

  it('fills a 1 MiB body dense with placeholders in one pass', () => {
    const text = '{{ CARD_NUMBER_1 }}\\{{CARDHOLDER_NAME_1}}'.repeat(MIB / 41);
    const values = new Map([
      ['CARD_NUMBER_1', Buffer.from('4111111111111111')],
      ['CARDHOLDER_NAME_1', Buffer.from('x')],
    ]);
    const scan = scanText(text, 1, 'raw');
    expect(timed(() => fillBytes(Buffer.from(text, 'latin1'), scan, values))).toBeLessThan(BUDGET_MS);
  });
});

/** Every match, known name or not: scanText would stop at the first unknown name, which the grammar still matches. */
function matchAll(text: string, style: EscapeStyle): PlaceholderScan {
  return { text, style, matches: findPlaceholders(text, style), uses: [] };
}

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
    'X',
    'a',
    '\t',
    '"',
    'é',
  ];
  const texts = fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((parts) => parts.join(''));
  const styles = fc.constantFrom<EscapeStyle>('raw', 'json');

  it('finds the same placeholders, escaped or not, as the reference regular expression', () => {
    fc.assert(
      fc.property(texts, styles, (text, style) => {
        const scan = matchAll(text, style);
        expect(scan.matches.map((m) => [m.token, m.escaped])).toEqual(referenceTokens(text, style));
      }),
      { numRuns: 5_000 },
    );
  });

  it('fills to the same text and the same bytes as the reference, and predicts the length', () => {
    fc.assert(
      fc.property(texts, styles, (text, style) => {
        const value = (token: string) => `<${token.toLowerCase()}é>`;
        const expected = referenceFill(text, style, value);
        const scan = matchAll(text, style);
        const tokens = new Map(scan.matches.map((m) => [m.token, value(m.token)]));
        expect(substitutePlaceholders(text, tokens, undefined, style)).toBe(expected);
        const encoded = new Map([...tokens].map(([token, v]) => [token, Buffer.from(v, 'latin1')]));
        expect(filledByteLength(scan, encoded)).toBe(expected.length);
        expect(fillBytes(Buffer.from(text, 'latin1'), scan, encoded).toString('latin1')).toBe(expected);
      }),
      { numRuns: 5_000 },
    );
  });

  it('checks names and positions as before: the first bad unescaped placeholder, in text order', () => {
    fc.assert(
      fc.property(texts, styles, fc.integer({ min: 0, max: 3 }), (text, style, count) => {
        let expected: string | null = null;
        for (const [token, escaped] of referenceTokens(text, style)) {
          if (escaped) continue;
          const [, name, digits] = TOKEN.exec(token)!;
          if (
            !['CARD_NUMBER', 'CARDHOLDER_NAME'].includes(name) ||
            Number(digits) < 1 ||
            Number(digits) > count ||
            digits.startsWith('0')
          ) {
            expected = token;
            break;
          }
        }
        let thrown: string | null = null;
        try {
          scanPlaceholders(text, count, style);
        } catch (error) {
          if (!(error instanceof PlaceholderError)) throw error;
          thrown = error.token;
        }
        expect(thrown).toBe(expected);
      }),
      { numRuns: 5_000 },
    );
  });

  it('keeps the documented examples', () => {
    const values = new Map([['CARD_NUMBER_1', '4111']]);
    expect(substitutePlaceholders('\\{{ CARD_NUMBER_1 }}', values)).toBe('{{ CARD_NUMBER_1 }}');
    expect(substitutePlaceholders('\\\\{{ CARD_NUMBER_1 }}', values)).toBe('\\{{ CARD_NUMBER_1 }}');
    expect(substitutePlaceholders('"\\\\{{ CARD_NUMBER_1 }}"', values, jsonStringContent, 'json')).toBe(
      '"{{ CARD_NUMBER_1 }}"',
    );
    expect(substitutePlaceholders('"\\\\\\\\{{ CARD_NUMBER_1 }}"', values, jsonStringContent, 'json')).toBe(
      '"\\\\{{ CARD_NUMBER_1 }}"',
    );
    expect(substitutePlaceholders('"\\{{ CARD_NUMBER_1 }}"', values, jsonStringContent, 'json')).toBe('"\\4111"');
    expect(substitutePlaceholders('{{   CARD_NUMBER_1  }}{{CARD_NUMBER_1}}', values)).toBe('41114111');
    for (const untouched of [
      '{{ card_number_1 }}',
      '{{ CARD_NUMBER }}',
      '{{ 1 }}',
      '{{}}',
      '{"a":{"b":{}}}',
      '{ { CARD_NUMBER_1 } }',
      '{{\tCARD_NUMBER_1}}',
    ]) {
      expect(scanPlaceholders(untouched, 1)).toEqual([]);
      expect(substitutePlaceholders(untouched, values)).toBe(untouched);
    }
    expect(() => scanPlaceholders('{{ CARD_NUMBER_1_2 }}', 1)).toThrow('is not a placeholder name');
    expect(() => scanPlaceholders('{{ CARD_NUMBER_01 }}', 1)).toThrow('position 01');
    expect(scanPlaceholders('\\{{ CARD_NUMBR_1 }}', 0)).toEqual([]);
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
