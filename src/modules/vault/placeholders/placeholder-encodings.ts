/**
 * How a filled value is written into a forwarded body, by the content type the target will get
 * (docs/placeholders.md "How values are inserted"): inside a JSON string, as XML character data or
 * attribute text, percent-encoded for a form, or as it is. Every byte outside the placeholders is
 * left alone: only the values are escaped.
 */

export type BodyEncoding = 'json' | 'xml' | 'form' | 'none';
export const BODY_ENCODINGS: readonly BodyEncoding[] = ['json', 'xml', 'form', 'none'];

// Anchored, one optional group over a bounded header value: linear.
const JSON_TYPE = /^application\/([a-z0-9!#$&^_.+-]*\+)?json[\t ]*(;|$)/i;
const XML_TYPE = /^((application|text)\/xml|[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]*\+xml)[\t ]*(;|$)/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded[\t ]*(;|$)/i;

/** The encoding of a body sent with `contentType` (the header value, or '' when there is none). */
export function bodyEncodingFor(contentType: string): BodyEncoding {
  if (JSON_TYPE.test(contentType)) return 'json';
  if (XML_TYPE.test(contentType)) return 'xml';
  if (FORM_TYPE.test(contentType)) return 'form';
  return 'none';
}

/** How a placeholder is escaped in the raw text: `\\` in a JSON document (a bare `\{` is not JSON), else `\`. */
export function escapeStyleFor(encoding: BodyEncoding): 'json' | 'raw' {
  return encoding === 'json' ? 'json' : 'raw';
}

const XML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  // As references, so an attribute value keeps them: a parser normalises literal ones to spaces.
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};
/**
 * What XML 1.0 cannot carry at all, even as a character reference: the other C0 controls, lone
 * surrogates, U+FFFE and U+FFFF. Stored cards cannot hold them (control characters are refused
 * when stored), but a value is checked all the same rather than sent as a document the target rejects.
 */
const NOT_XML =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\0-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** `value` written for `encoding`, or null when the encoding cannot carry it. */
export function encodeValue(value: string, encoding: BodyEncoding): string | null {
  switch (encoding) {
    case 'json':
      return JSON.stringify(value).slice(1, -1);
    case 'xml':
      if (NOT_XML.test(value)) return null;
      return value.replace(/[&<>"'\t\n\r]/g, (c) => XML_ENTITIES[c]);
    case 'form':
      // Exactly the application/x-www-form-urlencoded serializer: UTF-8, space as +, only *-._ and alphanumerics bare.
      return new URLSearchParams([['', value]]).toString().slice(1);
    case 'none':
      return value;
  }
}
