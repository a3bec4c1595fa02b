import type { IncomingHttpHeaders } from 'node:http';
import { echoed } from '../../../platform/problem/echo';
import { ProblemException } from '../../../platform/problem/problem';
import { ForwardingErrors } from './forwarding.errors';
import { FORWARD_METHODS, ForwardMethod } from '../../forwarding-setup/targets/http-methods';
import { isUuid } from '../../../platform/http/uuid';
import { HOP_BY_HOP } from '../sending/outbound-request';
import { isCryptogram } from '../../payments/network-tokens/token-requestor';

export const URL_HEADER = 'x-vault-forward-url';
export const PAYMENT_METHODS_HEADER = 'x-vault-forward-payment-methods';
/** One checkout session instead of payment methods: its card fills the _1 placeholders, and CARD_SECURITY_CODE_1 exists. */
export const CHECKOUT_SESSION_HEADER = 'x-vault-forward-checkout-session';
export const METHOD_HEADER = 'x-vault-forward-http-method';
export const AUTHENTICATIONS_HEADER = 'x-vault-forward-authentications';
export const TIMEOUT_HEADER = 'x-vault-forward-timeout';
/** Gr4vy's: the merchant, not the cardholder, starts this forward (a stored-credential, merchant-initiated use). */
export const MERCHANT_INITIATED_HEADER = 'x-vault-forward-merchant-initiated';
export const HEADER_PREFIX = 'x-vault-forward-header-';
/**
 * Per-request cryptograms of the listed cards' network tokens, by position as in
 * x-vault-forward-payment-methods (an empty entry: none for that card). Never logged, stored or queued
 * (docs/decisions/0100).
 */
export const CRYPTOGRAMS_HEADER = 'x-vault-forward-cryptograms';
/** Headers of a queued forward (Prefer: respond-async); forward-jobs/ reads them. */
export const MAX_ATTEMPTS_HEADER = 'x-vault-forward-max-attempts';
export const CALLBACK_URL_HEADER = 'x-vault-forward-callback-url';
const KNOWN = [
  URL_HEADER,
  METHOD_HEADER,
  PAYMENT_METHODS_HEADER,
  CHECKOUT_SESSION_HEADER,
  AUTHENTICATIONS_HEADER,
  TIMEOUT_HEADER,
  MERCHANT_INITIATED_HEADER,
  CRYPTOGRAMS_HEADER,
  MAX_ATTEMPTS_HEADER,
  CALLBACK_URL_HEADER,
];

const DEFAULT_TIMEOUT_SECONDS = 30;
const MAX_PAYMENT_METHODS = 100;

function paymentMethodsProblem(detail: string): ProblemException {
  return new ProblemException(ForwardingErrors.invalidPaymentMethodsHeader, detail, [
    { location: 'header', name: PAYMENT_METHODS_HEADER, message: detail },
  ]);
}

/** "id1,id2" → ids in order; every malformed case is a 400 naming the header and the position. */
export function parsePaymentMethodIds(raw: string): string[] {
  const ids = raw.split(',').map((part) => part.trim());
  if (ids.length > MAX_PAYMENT_METHODS)
    throw paymentMethodsProblem(`lists ${ids.length} payment methods; at most ${MAX_PAYMENT_METHODS} are allowed`);
  const seen = new Map<string, number>();
  ids.forEach((id, index) => {
    const position = index + 1;
    if (id === '') throw paymentMethodsProblem(`position ${position} is empty (separate UUIDs with single commas)`);
    if (!isUuid(id)) throw paymentMethodsProblem(`position ${position} is not a UUID`);
    const key = id.toLowerCase();
    const first = seen.get(key);
    if (first !== undefined)
      throw paymentMethodsProblem(`position ${position} repeats position ${first}; list each payment method once`);
    seen.set(key, position);
  });
  return ids.map((id) => id.toLowerCase());
}
/**
 * "c1,,c3" → cryptograms by position (null where empty). Each problem names the header and a
 * position, never a value: a cryptogram is a secret even when malformed.
 */
export function parseCryptograms(raw: string, paymentMethods: number): Array<string | null> {
  if (paymentMethods === 0)
    throw invalidHeader(
      CRYPTOGRAMS_HEADER,
      `needs ${PAYMENT_METHODS_HEADER}: a cryptogram goes with a stored card's network token (a checkout session's card has none)`,
    );
  const entries = raw.split(',').map((part) => part.trim());
  if (entries.length > paymentMethods)
    throw invalidHeader(
      CRYPTOGRAMS_HEADER,
      `lists ${entries.length} positions but ${PAYMENT_METHODS_HEADER} lists ${paymentMethods}`,
    );
  if (entries.every((entry) => entry === '')) throw invalidHeader(CRYPTOGRAMS_HEADER, 'holds no cryptogram');
  return entries.map((entry, index) => {
    if (entry === '') return null;
    if (!isCryptogram(entry))
      throw invalidHeader(
        CRYPTOGRAMS_HEADER,
        `position ${index + 1} is not a cryptogram (8 to 128 base64 or hex characters, comma-separated by position)`,
      );
    return entry;
  });
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

const SET_BY_SERVICE = new Set(['host', 'content-length']);
/** Not hop-by-hop, but the HTTP client cannot send it (undici: "expect header not supported"). */
const UNSENDABLE = new Set(['expect']);

export interface ForwardSpec {
  url: URL;
  method: ForwardMethod;
  paymentMethodIds: string[];
  /** x-vault-forward-checkout-session, lower-cased; never together with paymentMethodIds. */
  checkoutSessionId: string | null;
  authenticationIds: string[];
  timeoutMs: number;
  /** x-vault-forward-merchant-initiated: `true` or `false`; false when absent. */
  merchantInitiated: boolean;
  /** From x-vault-forward-header-NAME, as [NAME, value]; values may hold placeholders. */
  headers: Array<[string, string]>;
  /** x-vault-forward-cryptograms by position (null: none there); empty when absent. Never log it. */
  cryptograms: Array<string | null>;
}

/** 400 invalid-forward-header naming the header. */
export function invalidHeader(name: string, message: string): ProblemException {
  return new ProblemException(ForwardingErrors.invalidHeader, `${name} ${message}.`, [
    { location: 'header', name, message },
  ]);
}

/** A header sent at most once (a repeat is refused, never silently merged). */
export function singleHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (Array.isArray(value)) throw invalidHeader(name, 'must be sent once');
  return value;
}

/** An absolute http(s) URL of at most 4,096 characters without credentials, from `header`; else a 400 naming it. */
export function headerUrl(raw: string, header: string, credentials = 'must not carry credentials'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidHeader(header, 'must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalidHeader(header, 'must be an http(s) URL');
  if (url.username || url.password) throw invalidHeader(header, credentials);
  if (raw.length > 4096) throw invalidHeader(header, 'must be at most 4096 characters');
  return url;
}

/** Optimal string alignment distance: edits, with a swap of neighbours counting as one. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

const NEAR_MISS_DISTANCE = 3;

/**
 * The forwarding header a name was surely meant to be, or null when it is unrelated. Unknown
 * x-vault-forward-* names always match something; other names only when a few edits away.
 */
export function intendedHeader(name: string): string | null {
  // Header names repeat from request to request: remember the verdict (a bounded memo).
  const known = verdicts.get(name);
  if (known !== undefined) return known;
  const verdict = judge(name);
  if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
  verdicts.set(name, verdict);
  return verdict;
}

const verdicts = new Map<string, string | null>();
const MAX_VERDICTS = 10_000;

const FORWARD_PREFIX = 'x-vault-forward-';

function judge(name: string): string | null {
  if (name.startsWith(FORWARD_PREFIX)) {
    // x-vault-forward-SOMETHING: a slip in a known name (…-authentication, …-payment-method), or else
    // most likely a header meant to be forwarded (x-vault-forward-authorization).
    const suffix = name.slice(FORWARD_PREFIX.length);
    const dash = suffix.indexOf('-');
    if (dash > 0 && editDistance(suffix.slice(0, dash), 'header') <= 2)
      return `${HEADER_PREFIX}${suffix.slice(dash + 1)}`;
    const close = KNOWN.map((known) => [known, editDistance(suffix, known.slice(FORWARD_PREFIX.length))] as const)
      .filter(([, distance]) => distance <= 2)
      .sort((a, b) => a[1] - b[1]);
    return close.length > 0 ? close[0][0] : `${HEADER_PREFIX}${suffix}`;
  }
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const known of KNOWN) {
    const distance = editDistance(name, known);
    if (distance < bestDistance) [best, bestDistance] = [known, distance];
  }
  if (bestDistance <= NEAR_MISS_DISTANCE) return best;
  // x-vault-foward-header-authorization, x-valut-forward-header-…: a slip in the prefix itself.
  const at = name.indexOf('-header-');
  if (at > 0 && editDistance(name.slice(0, at + '-header-'.length), HEADER_PREFIX) <= NEAR_MISS_DISTANCE) {
    return `${HEADER_PREFIX}${name.slice(at + '-header-'.length)}`;
  }
  return null;
}

/**
 * Reads and checks every x-vault-forward-* header; each problem names the header at fault.
 * `rawHeaders` (name, value, name, value…) reveals repeats, which Node joins with ", " in `headers`:
 * a repeated forwarding header is ambiguous (two targets, two credentials) and refused.
 */
export function parseForwardHeaders(headers: IncomingHttpHeaders, rawHeaders: string[] = []): ForwardSpec {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (!name.startsWith(FORWARD_PREFIX)) continue;
    if (seen.has(name)) throw invalidHeader(name, 'must be sent once');
    seen.add(name);
  }
  const forwarded: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(HEADER_PREFIX)) {
      const target = name.slice(HEADER_PREFIX.length);
      if (!TOKEN.test(target)) throw invalidHeader(name, 'must name a header after the prefix');
      if (HOP_BY_HOP.has(target))
        throw invalidHeader(name, `names the hop-by-hop header ${target}, which is never forwarded`);
      if (SET_BY_SERVICE.has(target))
        throw invalidHeader(name, `names ${target}, which the service sets for the target`);
      if (UNSENDABLE.has(target))
        throw invalidHeader(name, `names ${target}, which cannot be sent to the target (no 100-continue)`);
      if (Array.isArray(value)) throw invalidHeader(name, 'must be sent once');
      forwarded.push([target, value ?? '']);
      continue;
    }
    if (KNOWN.includes(name)) continue;
    const meant = intendedHeader(name);
    if (meant) {
      throw new ProblemException(
        ForwardingErrors.unknownHeader,
        `${echoed(name)} is not a forwarding header; did you mean ${meant}?`,
        [{ location: 'header', name, message: `unknown; did you mean ${meant}?` }],
      );
    }
  }

  const rawUrl = singleHeader(headers, URL_HEADER);
  if (!rawUrl) throw invalidHeader(URL_HEADER, 'is required');
  const url = headerUrl(
    rawUrl,
    URL_HEADER,
    'must not carry credentials; send them with x-vault-forward-header-authorization',
  );

  const rawMethod = singleHeader(headers, METHOD_HEADER);
  if (!rawMethod) throw invalidHeader(METHOD_HEADER, 'is required');
  const method = rawMethod.trim().toUpperCase();
  if (!(FORWARD_METHODS as readonly string[]).includes(method))
    throw invalidHeader(METHOD_HEADER, `must be one of ${FORWARD_METHODS.join(', ')}`);

  const rawIds = singleHeader(headers, PAYMENT_METHODS_HEADER);
  const paymentMethodIds = rawIds === undefined ? [] : parsePaymentMethodIds(rawIds);
  const rawSession = singleHeader(headers, CHECKOUT_SESSION_HEADER);
  if (rawSession !== undefined && rawIds !== undefined) {
    const message = `send either ${PAYMENT_METHODS_HEADER} or ${CHECKOUT_SESSION_HEADER}, not both`;
    throw new ProblemException(
      ForwardingErrors.invalidHeader,
      `${PAYMENT_METHODS_HEADER} and ${CHECKOUT_SESSION_HEADER} were both sent; ${message}.`,
      [
        { location: 'header', name: PAYMENT_METHODS_HEADER, message },
        { location: 'header', name: CHECKOUT_SESSION_HEADER, message },
      ],
    );
  }
  if (rawSession !== undefined && !isUuid(rawSession.trim()))
    throw invalidHeader(CHECKOUT_SESSION_HEADER, 'must be one checkout session id (a UUID)');
  const checkoutSessionId = rawSession === undefined ? null : rawSession.trim().toLowerCase();

  const rawAuth = singleHeader(headers, AUTHENTICATIONS_HEADER);
  const authenticationIds = rawAuth === undefined ? [] : rawAuth.split(',');
  authenticationIds.forEach((id, index) => {
    if (!isUuid(id))
      throw invalidHeader(
        AUTHENTICATIONS_HEADER,
        `position ${index + 1} is not a UUID (comma-separated, no other separator)`,
      );
  });

  const rawTimeout = singleHeader(headers, TIMEOUT_HEADER);
  let timeoutSeconds = DEFAULT_TIMEOUT_SECONDS;
  if (rawTimeout !== undefined) {
    if (!/^\d{1,3}$/.test(rawTimeout) || Number(rawTimeout) < 1 || Number(rawTimeout) > 120) {
      throw invalidHeader(TIMEOUT_HEADER, 'must be whole seconds from 1 to 120');
    }
    timeoutSeconds = Number(rawTimeout);
  }

  const rawInitiated = singleHeader(headers, MERCHANT_INITIATED_HEADER);
  let merchantInitiated = false;
  if (rawInitiated !== undefined) {
    const value = rawInitiated.trim().toLowerCase();
    if (value !== 'true' && value !== 'false') throw invalidHeader(MERCHANT_INITIATED_HEADER, 'must be true or false');
    merchantInitiated = value === 'true';
  }

  const rawCryptograms = singleHeader(headers, CRYPTOGRAMS_HEADER);
  const cryptograms = rawCryptograms === undefined ? [] : parseCryptograms(rawCryptograms, paymentMethodIds.length);

  return {
    url,
    method: method as ForwardMethod,
    merchantInitiated,
    cryptograms,
    paymentMethodIds,
    checkoutSessionId,
    authenticationIds,
    timeoutMs: timeoutSeconds * 1000,
    headers: forwarded,
  };
}
