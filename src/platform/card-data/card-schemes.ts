/**
 * The one table of card schemes, for the server (a stored card's `scheme`) and the Secure Fields frames (the
 * scheme shown while typing, the number's grouping and the security code's length): `credit-card-type`, kept by
 * Braintree, read through our names. Pure and free of Node APIs: the frames bundle this file for the browser.
 */
import creditCardType from 'credit-card-type';

export type CardScheme =
  'visa' | 'mastercard' | 'amex' | 'discover' | 'jcb' | 'diners' | 'unionpay' | 'maestro' | 'unknown';

/** credit-card-type's names → ours (Gr4vy's scheme names); a brand not listed here is 'unknown'. */
const SCHEME_NAMES: Readonly<Record<string, CardScheme>> = {
  visa: 'visa',
  mastercard: 'mastercard',
  'american-express': 'amex',
  discover: 'discover',
  jcb: 'jcb',
  'diners-club': 'diners',
  unionpay: 'unionpay',
  maestro: 'maestro',
};

/** What a scheme means for the fields: where the number's groups end, its lengths, its security code's length. */
interface SchemeLayout {
  scheme: CardScheme;
  /** Digit positions after which a space is shown: 4-4-4-4 ([4, 8, 12]), Amex 4-6-5 ([4, 10]). */
  gaps: readonly number[];
  lengths: readonly number[];
  securityCodeLength: number;
}

const UNKNOWN_LAYOUT: SchemeLayout = {
  scheme: 'unknown',
  gaps: [4, 8, 12, 16],
  lengths: [12, 13, 14, 15, 16, 17, 18, 19],
  securityCodeLength: 3,
};

/** The layout of the scheme the leading digits name; while they could still name several, the first known one. */
export function schemeLayout(digits: string): SchemeLayout {
  if (!/^\d+$/.test(digits)) return UNKNOWN_LAYOUT;
  for (const match of creditCardType(digits)) {
    const scheme = SCHEME_NAMES[match.type];
    if (scheme) return { scheme, gaps: match.gaps, lengths: match.lengths, securityCodeLength: match.code.size };
  }
  return UNKNOWN_LAYOUT;
}

/** The scheme from the leading digits; 'unknown' when no scheme we name claims them. */
export function cardScheme(digits: string): CardScheme {
  return schemeLayout(digits).scheme;
}

/** The security code's length for a scheme named by Gr4vy's name (a stored card's `scheme`): 4 for Amex. */
export function securityCodeLengthOf(scheme: string | null | undefined): number {
  return scheme === 'amex' || scheme === 'american-express' ? 4 : 3;
}
