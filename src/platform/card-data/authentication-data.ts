/**
 * Sensitive authentication data (PCI DSS 3.3.1: never kept after authorisation, not even encrypted) found
 * by the name of the field that carries it and by the shape that holds it (decisions 0113, 0136).
 *
 * A name is compared after decoding (percent-escapes, JSON escapes), NFKC, folding case and removing every
 * character that is not a letter or a digit: `cvv_2`, `CVV-2`, `c.v.v`, `card[cvv]` and `"c\u0076v"` are
 * `cvv2`, `cvv2`, `cvv`, `cardcvv`, `cvv`. It names authentication data (authentication-data-names.ts) when it is one of EXACT, or ends
 * with one of CORES followed by at most one of TAILS (`card_cvv2`, `ssl_cvv2cvc2`, `cvd_value`, `cvNumber`,
 * `x_card_code`), or when its last word is `pin` (`ssl_pin`, `merchantPin`, not `pincode` nor `spin`).
 * A bracketed, dotted or namespaced name is also judged by each of its parts (`cvv[0]`, `ns:cid`).
 *
 * Whatever a code's name holds is replaced by REDACTED_VALUE, the rest left as written: a JSON member's
 * value of any kind (a string, a number, a literal, an array, an object: then the string "[Redacted]"),
 * also in JSON escaped inside JSON strings; an XML element's whole content (text, CDATA, comments,
 * nested elements) and an attribute; form fields and URL matrix parameters; a multipart part's body; a CSV
 * column named by the header row; a `name: value` line (headers in text, YAML). Each pass is a hand-written
 * scanner that reads each character a bounded number of times, never throws, and treats what it cannot
 * close as running to the end of the text (over-redaction is the chosen failure).
 */

import { multipartEdits, csvEdits, formEdits, lineEdits } from './authentication-data-lines';
import { jsonEdits, xmlEdits } from './authentication-data-markup';
import { applied, isAuthenticationDataField, REDACTED_VALUE } from './authentication-data-names';

export { isAuthenticationDataField };

/** `text` with whatever every field of sensitive authentication data holds replaced, in each syntax. */
export function withoutAuthenticationData(text: string): string {
  let out = text;
  if (out.includes('"')) {
    // JSON, then JSON escaped once, twice and three times inside JSON strings (an echoed request).
    for (let depth = 0; depth <= 3; depth++) {
      if (depth > 0 && !out.includes(`${'\\'.repeat(2 ** depth - 1)}"`)) break;
      out = applied(out, jsonEdits(out, depth));
    }
  }
  if (out.includes('<')) out = applied(out, xmlEdits(out));
  if (/content-disposition/i.test(out)) out = applied(out, multipartEdits(out));
  out = applied(out, csvEdits(out));
  if (out.includes('=')) out = applied(out, formEdits(out));
  if (out.includes(':') || out.includes('=')) out = applied(out, lineEdits(out));
  return out;
}

/**
 * A URL path's matrix parameters (`/pay;cvv=737/x`) whose name is a code's with their values replaced; the
 * rest as written.
 */
export function pathWithoutAuthenticationData(path: string): string {
  if (!path.includes(';')) return path;
  return path
    .split('/')
    .map((segment) => {
      if (!segment.includes(';')) return segment;
      const [first, ...parameters] = segment.split(';');
      const kept = parameters.map((parameter) => {
        const equals = parameter.indexOf('=');
        if (equals <= 0 || equals === parameter.length - 1) return parameter;
        return isAuthenticationDataField(parameter.slice(0, equals))
          ? `${parameter.slice(0, equals + 1)}${REDACTED_VALUE}`
          : parameter;
      });
      return [first, ...kept].join(';');
    })
    .join('/');
}
