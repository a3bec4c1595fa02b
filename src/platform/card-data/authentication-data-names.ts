/**
 * Which field names name sensitive authentication data (decision 0136), and the edits every shape's scanner
 * makes (authentication-data.ts). A name is compared after decoding (percent-escapes; a JSON scanner undoes
 * JSON escapes first), NFKC, folding case and removing every character that is not a letter or a digit.
 */
/** Names that are authentication data only as a whole (too short or too common to be a suffix). */
const EXACT: ReadonlySet<string> = new Set(['cid', 'csc', 'pin', 'pwd']);

/**
 * A name ending with one of these (after any prefix, before one of TAILS) is authentication data. Security
 * codes: the codes' own names and the PSPs' (Authorize.net `cardCode`, Cybersource `cvNumber`, Chase
 * `CardSecVal`, Litle `cardValidationNum`); track data and PINs; credentials.
 */
const CORES = [
  'cvv2',
  'cvv',
  'cvc2',
  'cvc',
  'cvn2',
  'cvn',
  'cvd2',
  'cvd',
  'cv2',
  'cvx2',
  'cav2',
  'cvnumber',
  'securitycode',
  'secval',
  'cardcode',
  'cardverification',
  'verificationvalue',
  'verificationcode',
  'cardvalidation',
  'cardcid',
  'cardcsc',
  'cardpin',
  'pinblock',
  'encryptedpin',
  'track1',
  'track2',
  'track3',
  'trackdata',
  'magstripe',
  'magneticstripe',
  'password',
  'passwd',
  'passphrase',
  'passcode',
  'secret',
  'apikey',
  'privatekey',
  'accesstoken',
  'refreshtoken',
  'authtoken',
];

/** What may follow a core: the value's own words (`cvd_value`, `cvv_number`, `cvv_encrypted`, Moneris `cvd_info`). */
const TAILS = [
  'value',
  'values',
  'number',
  'num',
  'no',
  'nr',
  'code',
  'data',
  'val',
  'digits',
  'encrypted',
  'enc',
  'info',
  'equivalentdata',
];

const NAME_RULE = new RegExp(`(?:${CORES.join('|')})(?:${TAILS.join('|')})?$`);
/** Cores and tails are at most this long together; only the end of a longer name is read. */
const RULE_WINDOW = Math.max(...CORES.map((c) => c.length)) + Math.max(...TAILS.map((t) => t.length));

export const REDACTED_VALUE = '[Redacted]';

/** A name as it is compared: NFKC, lower case, letters and digits only. */
function foldedName(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
}

function namesData(folded: string): boolean {
  if (folded === '') return false;
  return EXACT.has(folded) || NAME_RULE.test(folded.slice(-RULE_WINDOW));
}

/** `%XX` escapes decoded (a form name, a URL), up to three times for double encoding; bytes that are not UTF-8 kept. */
function percentDecoded(name: string): string {
  let out = name;
  for (let round = 0; round < 3 && out.includes('%'); round++) {
    const next = out.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      }
    });
    if (next === out) break;
    out = next;
  }
  return out;
}

/** Whether `name` names a field of sensitive authentication data (see the file's comment for the rule). */
export function isAuthenticationDataField(name: string): boolean {
  const decoded = percentDecoded(name.replaceAll('+', ' '));
  if (judged(decoded)) return true;
  if (!/[[\].:]/.test(decoded)) return false;
  // Each part of a bracketed, namespaced or dotted name: `cvv[0]`, `ns:cid`, `c.v.v[]`, `ssl_pin[0]`.
  return [/[[\]:]+/, /[[\].:]+/].some((split) => decoded.split(split).some(judged));
}

function judged(name: string): boolean {
  if (namesData(foldedName(name))) return true;
  // `pin` as the last word: words split at non-alphanumerics and at a lower-to-upper case change.
  let last = name.length;
  while (last > 0 && !/[\p{L}\p{N}]/u.test(name[last - 1])) last--;
  if (!/pin$/i.test(name.slice(Math.max(0, last - 3), last))) return false;
  const words = name.split(/[^\p{L}\p{N}]+|(?<=\p{Ll})(?=\p{Lu})/u).filter((w) => w !== '');
  return words.length > 0 && words[words.length - 1].toLowerCase() === 'pin';
}

/** A replacement: text[start, end) becomes `text`. Each pass makes them in order, none overlapping. */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

export function applied(text: string, edits: readonly Edit[]): string {
  if (edits.length === 0) return text;
  let out = '';
  let at = 0;
  for (const edit of edits) {
    if (edit.start < at) continue;
    out += text.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + text.slice(at);
}
