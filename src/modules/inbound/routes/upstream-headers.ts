import { holdsCardNumber } from '../../../platform/card-data/card-numbers';
import { HOP_BY_HOP } from '../../forwarding/sending/outbound-request';

/**
 * Headers a route sets on every request it sends to its upstream (decision 0158): how the merchant's endpoint
 * knows the vault beyond the Standard Webhooks signature (an API key, a bearer token, a routing header). Their
 * values are secrets: sealed at rest with the route's caller secret, never answered (answers carry the names).
 */
export interface UpstreamHeader {
  name: string;
  value: string;
}

const MAX_HEADERS = 20;
const MAX_NAME_CHARS = 100;
const MAX_VALUE_CHARS = 4096;
const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
/** RFC 9110 field-value: visible characters, spaces and tabs within, none at either end. */
const FIELD_VALUE = /^[\x21-\x7e\x80-\xff](?:[\x20-\x7e\x80-\xff\t]*[\x21-\x7e\x80-\xff])?$/;

/**
 * Names the route may not set: the hop's (HOP_BY_HOP, proxy-*), the message's own (host, the body's content-*,
 * expect), and what the vault sets itself (the Standard Webhooks signature, x-vault-*).
 */
function reservedName(name: string): boolean {
  return (
    HOP_BY_HOP.has(name) ||
    /^(host|expect|content-[a-z0-9-]*|proxy-[a-z0-9-]*|webhook-[a-z0-9-]*|x-vault-[a-z0-9-]*)$/.test(name)
  );
}

/** Why an upstream_headers list is refused (naming a header, never repeating a value), or null. */
export function upstreamHeadersProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return 'must be a list of {"name", "value"}';
  if (value.length > MAX_HEADERS) return `must hold at most ${MAX_HEADERS} headers`;
  const seen = new Set<string>();
  for (const [i, entry] of value.entries()) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return `[${i}] must be {"name", "value"}`;
    const { name, value: headerValue, ...rest } = entry as Record<string, unknown>;
    if (Object.keys(rest).length > 0) return `[${i}] has only name and value`;
    if (typeof name !== 'string' || name.length > MAX_NAME_CHARS || !TOKEN.test(name))
      return `[${i}].name must be an HTTP header name of at most ${MAX_NAME_CHARS} characters`;
    const lower = name.toLowerCase();
    if (reservedName(lower)) return `${lower} is a header the vault or the connection sets`;
    if (seen.has(lower)) return `${lower} is named twice`;
    seen.add(lower);
    if (typeof headerValue !== 'string' || headerValue.length > MAX_VALUE_CHARS || !FIELD_VALUE.test(headerValue))
      return `${lower}'s value must be 1 to ${MAX_VALUE_CHARS} visible characters (spaces within)`;
    if (holdsCardNumber(headerValue)) return `${lower}'s value holds a card number`;
  }
  return null;
}

/** The checked list as it is kept: names in lower case. */
export function normalisedUpstreamHeaders(headers: readonly UpstreamHeader[]): UpstreamHeader[] {
  return headers.map(({ name, value }) => ({ name: name.toLowerCase(), value }));
}
