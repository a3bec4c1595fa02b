import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import {
  bodyEncodingFor,
  encodeValue,
  escapeStyleFor,
} from '../../src/modules/vault/placeholders/placeholder-encodings';
import {
  filledValue,
  PlaceholderError,
  scanText,
  substitutePlaceholders,
} from '../../src/modules/vault/placeholders/placeholders';

/** A real XML parser, with character references decoded as the XML specification says. */
const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  htmlEntities: true,
});

const NAME = 'O\'Brien & <Sons> "=+%"';

/** `value` as an XML template would carry it, once as text and once in each kind of quoted attribute. */
function xmlRoundTrip(value: string): { text: string; double: string; single: string } {
  const template = `<r d="{{ CARDHOLDER_NAME_1 }}" s='{{ CARDHOLDER_NAME_1 }}'>{{ CARDHOLDER_NAME_1 }}</r>`;
  const document = substitutePlaceholders(template, new Map([['CARDHOLDER_NAME_1', value]]), (v) =>
    encodeValue(v, 'xml')!,
  );
  expect(XMLValidator.validate(document)).toBe(true);
  const r = (xml.parse(document) as { r: Record<string, string> | string }).r;
  return typeof r === 'string'
    ? { text: r, double: '', single: '' }
    : { text: r['#text'] ?? '', double: r['@d'], single: r['@s'] };
}

describe('escaping by the content type the target gets', () => {
  it.each([
    ['application/json', 'json'],
    ['Application/JSON; charset=utf-8', 'json'],
    ['application/vnd.api+json', 'json'],
    ['application/xml', 'xml'],
    ['text/xml; charset=ISO-8859-1', 'xml'],
    ['application/soap+xml; charset=utf-8; action="urn:pay"', 'xml'],
    ['application/atom+xml', 'xml'],
    ['image/svg+xml', 'xml'],
    ['application/x-www-form-urlencoded', 'form'],
    ['APPLICATION/X-WWW-FORM-URLENCODED;charset=UTF-8', 'form'],
    ['text/plain', 'none'],
    ['multipart/form-data; boundary=x', 'none'],
    ['application/xmlish', 'none'],
    ['application/jsonp', 'none'],
    ['text/html', 'none'],
    ['', 'none'],
  ])('%p → %s', (contentType, encoding) => {
    expect(bodyEncodingFor(contentType)).toBe(encoding);
    expect(escapeStyleFor(bodyEncodingFor(contentType))).toBe(encoding === 'json' ? 'json' : 'raw');
  });

  it('XML: a name with & < > and both quotes reaches a real parser exactly, as text and in attributes', () => {
    expect(encodeValue(NAME, 'xml')).toBe('O&apos;Brien &amp; &lt;Sons&gt; &quot;=+%&quot;');
    expect(xmlRoundTrip(NAME)).toEqual({ text: NAME, double: NAME, single: NAME });
    // Tab and line breaks as references: a parser would turn literal ones in an attribute into spaces.
    expect(xmlRoundTrip('a\tb\nc\rd')).toEqual({ text: 'a\tb\nc\rd', double: 'a\tb\nc\rd', single: 'a\tb\nc\rd' });
    expect(xmlRoundTrip('Zoë 李 😀')).toEqual({ text: 'Zoë 李 😀', double: 'Zoë 李 😀', single: 'Zoë 李 😀' });
  });

  it('XML: characters XML 1.0 cannot carry at all are refused, never sent', () => {
    for (const bad of ['a\u0001b', '\u0000', 'x\u001f', '\ufffe', '\ud800', 'a\udc00'])
      expect(encodeValue(bad, 'xml')).toBeNull();
    expect(encodeValue('😀', 'xml')).toBe('😀');
  });

  it('XML: any text the parser can read comes back exactly (property)', () => {
    const xmlChar = fc
      .string({ unit: 'grapheme', maxLength: 30 })
      // eslint-disable-next-line no-control-regex -- what XML 1.0 cannot carry, as in the code
      .filter((s) => !/[\0-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/.test(s));
    fc.assert(
      fc.property(xmlChar, (value) => {
        // The parser drops an element's text when it is empty and gives a bare string when there are no attributes.
        expect(xmlRoundTrip(value)).toEqual({ text: value, double: value, single: value });
      }),
      { numRuns: 1_000 },
    );
  });

  it('form: percent-encoded exactly as URLSearchParams serialises, and parsed back exactly', () => {
    expect(encodeValue(NAME, 'form')).toBe('O%27Brien+%26+%3CSons%3E+%22%3D%2B%25%22');
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 30 }),
        fc.string({ unit: 'grapheme', maxLength: 30 }),
        (a, b) => {
          const body = substitutePlaceholders(
            'holder={{ CARDHOLDER_NAME_1 }}&other={{ CARDHOLDER_NAME_2 }}',
            new Map([
              ['CARDHOLDER_NAME_1', a],
              ['CARDHOLDER_NAME_2', b],
            ]),
            (v) => encodeValue(v, 'form')!,
          );
          const parsed = new URLSearchParams(body);
          expect([...parsed.keys()]).toEqual(['holder', 'other']);
          expect(parsed.get('holder')).toBe(a);
          expect(parsed.get('other')).toBe(b);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('JSON: today’s string escaping; none: the value as it is', () => {
    expect(encodeValue(NAME, 'json')).toBe('O\'Brien & <Sons> \\"=+%\\"');
    expect(JSON.parse(`"${encodeValue('a"\\\n\u0001', 'json')}"`)).toBe('a"\\\n\u0001');
    expect(encodeValue(NAME, 'none')).toBe(NAME);
  });

  it('| raw opts one placeholder out of the escaping, in every encoding', () => {
    const scan = scanText('{{ CARDHOLDER_NAME_1 | raw }} {{CARDHOLDER_NAME_1|raw}} {{ CARDHOLDER_NAME_1 }}', 1);
    const values = new Map([['CARDHOLDER_NAME_1', NAME]]);
    for (const encoding of ['json', 'xml', 'form', 'none'] as const) {
      expect(filledValue(scan.matches[0], values, encoding)).toBe(NAME);
      expect(filledValue(scan.matches[1], values, encoding)).toBe(NAME);
      expect(filledValue(scan.matches[2], values, encoding)).toBe(encodeValue(NAME, encoding));
    }
    expect(scan.matches.map((m) => m.key)).toEqual([
      'CARDHOLDER_NAME_1 | raw',
      'CARDHOLDER_NAME_1|raw',
      'CARDHOLDER_NAME_1',
    ]);
    expect(scan.uses.map((u) => u.token)).toEqual(['CARDHOLDER_NAME_1', 'CARDHOLDER_NAME_1', 'CARDHOLDER_NAME_1']);
  });

  it('| raw takes no arguments and comes last; a bad raw is refused naming the placeholder, never a value', () => {
    expect(() => scanText('{{ CARD_NUMBER_1 | raw(1) }}', 1)).toThrow('raw takes no arguments');
    expect(() => scanText('{{ CARD_NUMBER_1 | raw | raw }}', 1)).toThrow('raw must be the last function');
    const value = scanText('<n>{{ CARDHOLDER_NAME_1 }}</n>', 1);
    let thrown: unknown;
    try {
      filledValue(value.matches[0], new Map([['CARDHOLDER_NAME_1', 'Secret\u0001Name']]), 'xml');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PlaceholderError);
    expect((thrown as PlaceholderError).reason).toBe('unencodable');
    expect((thrown as Error).message).toBe('{{ CARDHOLDER_NAME_1 }} has a character that the body (xml) cannot carry');
  });
});
