/**
 * Sensitive authentication data (PCI DSS 3.3.1: never kept after authorisation, not even encrypted) found
 * by the name of the field that carries it, in JSON, XML and form bodies (decision 0113). Names are
 * compared without case and without the separators `_`, `-`, `.` and spaces, so `security_code`,
 * `securityCode` and `Security-Code` are one name; a bracketed form name (`card[cvc]`, `card%5Bcvc%5D`)
 * and a namespaced XML element (`<ns:cvv>`) are judged by their last part.
 *
 * The list is the names payment APIs use for a card's security code, its track data and a PIN, and
 * the common names of credentials (decision 0113 lists them). Values are replaced with REDACTED_VALUE; everything else is left as written.
 * Linear: each pattern below matches a field name first, then reads the value only after a listed name.
 */
export const SECURITY_CODE_FIELDS = [
  'cvv',
  'cvv2',
  'cvc',
  'cvc2',
  'cvn',
  'cvn2',
  'cvd',
  'cid',
  'csc',
  'cav2',
  'cvx2',
  'securitycode',
  'cardsecuritycode',
  'cardverificationvalue',
  'cardverificationcode',
  'verificationvalue',
  'cardcode',
  'cardcvv',
  'cardcvc',
  'cvvcode',
  'cvccode',
  'cvvnumber',
  'cvcnumber',
  'cvv2code',
  'encryptedsecuritycode',
] as const;

/** Track data and PINs: the rest of sensitive authentication data. */
export const OTHER_AUTHENTICATION_FIELDS = [
  'track1',
  'track2',
  'trackdata',
  'track1data',
  'track2data',
  'pin',
  'pinblock',
];

/**
 * Credentials a caller may type into a body for the target (a merchant password, an API secret): not card
 * data, but no record needs them either.
 */
export const CREDENTIAL_FIELDS = [
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'secret',
  'clientsecret',
  'apisecret',
  'apikey',
  'accesstoken',
  'refreshtoken',
  'authtoken',
  'privatekey',
  'sharedsecret',
];

const NAMES: ReadonlySet<string> = new Set([
  ...SECURITY_CODE_FIELDS,
  ...OTHER_AUTHENTICATION_FIELDS,
  ...CREDENTIAL_FIELDS,
]);

export const REDACTED_VALUE = '[Redacted]';

/** A field name as it is compared: lower case, without separators, its last bracketed or namespaced part. */
export function normalisedFieldName(name: string): string {
  let last = name;
  const decoded = /%5[bd]/i.test(last) ? last.replace(/%5b/gi, '[').replace(/%5d/gi, ']') : last;
  const bracket = /\[([^\][]*)\]$/.exec(decoded);
  last = bracket ? bracket[1] : decoded;
  const colon = last.lastIndexOf(':');
  if (colon >= 0) last = last.slice(colon + 1);
  return last.toLowerCase().replace(/[-_. ]/g, '');
}

/** Whether `name` names a field of sensitive authentication data. */
export function isAuthenticationDataField(name: string): boolean {
  return NAMES.has(normalisedFieldName(name));
}

/** JSON: a member name, then its string or scalar value. */
const JSON_MEMBER = /"((?:[^"\\\n]|\\.){1,64})"(\s*:\s*)("(?:[^"\\]|\\.)*"|-?[\w.+-]+)/g;
/** JSON inside a JSON string (an answer that echoes a request as a string): `\"cvv\":\"123\"`. */
const ESCAPED_JSON_MEMBER = /\\"([^"\\]{1,64})\\"(\s*:\s*)(\\"(?:[^"\\]|\\[^"])*?\\"|-?[\w.+-]+)/g;
/** XML: an element's text content (no nested element), `<cvv>123</cvv>` or `<ns:cvv a="b">123</ns:cvv>`. */
const XML_ELEMENT = /<([\w.:-]{1,64})(\s[^<>]{0,512})?>([^<]*)<\/\1\s*>/g;
/** XML: an attribute, `cvv="123"`. */
const XML_ATTRIBUTE = /(\s)([\w.:-]{1,64})(\s*=\s*)("[^"<>]*"|'[^'<>]*')/g;
/** Form: a field's `name=` after the start of the body, `&`, `;`, `?` or a line break; its value is read after. */
const FORM_NAME = /(?:^|[&;?\n])([\w.\-[\]%]{1,96})=/g;
/** Where a form value ends. */
const FORM_VALUE_END = /[&;\n]/g;

/** `text` with the value of every field of sensitive authentication data replaced, in each syntax. */
export function withoutAuthenticationData(text: string): string {
  let out = text;
  if (out.includes('"')) {
    out = out.replace(JSON_MEMBER, (whole, name: string, colon: string) =>
      isAuthenticationDataField(name) ? `"${name}"${colon}"${REDACTED_VALUE}"` : whole,
    );
    if (out.includes('\\"'))
      out = out.replace(ESCAPED_JSON_MEMBER, (whole, name: string, colon: string) =>
        isAuthenticationDataField(name) ? `\\"${name}\\"${colon}\\"${REDACTED_VALUE}\\"` : whole,
      );
  }
  if (out.includes('<')) {
    out = out.replace(XML_ELEMENT, (whole, name: string, attributes: string | undefined, value: string) =>
      isAuthenticationDataField(name) && value !== ''
        ? `<${name}${attributes ?? ''}>${REDACTED_VALUE}</${name}>`
        : whole,
    );
    out = out.replace(XML_ATTRIBUTE, (whole, space: string, name: string, equals: string, value: string) =>
      isAuthenticationDataField(name) ? `${space}${name}${equals}${value[0]}${REDACTED_VALUE}${value[0]}` : whole,
    );
  }
  return out.includes('=') ? withoutFormValues(out) : out;
}

/** Form fields: the value is looked for only after a listed name, so each character is read once or twice. */
function withoutFormValues(text: string): string {
  let out = '';
  let at = 0;
  for (const match of text.matchAll(FORM_NAME)) {
    const valueStart = match.index + match[0].length;
    if (valueStart < at || !isAuthenticationDataField(match[1])) continue;
    FORM_VALUE_END.lastIndex = valueStart;
    const valueEnd = FORM_VALUE_END.exec(text)?.index ?? text.length;
    if (valueEnd === valueStart) continue;
    out += text.slice(at, valueStart) + REDACTED_VALUE;
    at = valueEnd;
  }
  return at === 0 ? text : out + text.slice(at);
}
