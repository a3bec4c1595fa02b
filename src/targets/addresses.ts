import { lookup as dnsLookup, LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * SSRF guard: only globally routable unicast addresses may be forwarded to. Everything ipaddr.js
 * classifies otherwise — loopback, private, link-local (169.254.169.254, the cloud metadata service),
 * carrier-grade NAT, multicast, unspecified, reserved, unique-local, documentation and the
 * IPv4-in-IPv6 forms of all of these — is refused. Returns the reason, or null when allowed.
 */
export function blockedAddressReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return 'not an IP address';
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return blockedAddressReason(v6.toIPv4Address().toString());
    // NAT64 / 6to4 / Teredo embed an IPv4 address that could be internal: refuse them outright.
  }
  const range = parsed.range();
  return range === 'unicast' ? null : (RANGE_NAMES[range] ?? range);
}

/** ipaddr.js range names, as people write them. */
const RANGE_NAMES: Record<string, string> = {
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  uniqueLocal: 'unique-local',
  ipv4Mapped: 'IPv4-mapped',
  rfc6145: 'IPv4-translated',
  rfc6052: 'NAT64',
  '6to4': '6to4',
  teredo: 'Teredo',
};

/** The hostname of a URL without IPv6 brackets, and whether it is an IP literal. */
export function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}

/** For a host that is an IP literal, why it may not be forwarded to; null for names and public addresses. */
export function literalBlockReason(hostname: string): string | null {
  const literal = literalAddress(hostname);
  return literal ? blockedAddressReason(literal) : null;
}

export class BlockedAddressError extends Error {
  readonly code = 'EVF_BLOCKED_ADDRESS';
  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`${hostname} resolves to ${address} (${reason}), which may not be forwarded to`);
    this.name = 'BlockedAddressError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** What guardedLookup resolves with: node:dns's lookup with `all: true`. */
export type ResolveAll = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for net/tls.connect that resolves once (with `resolve`), refuses the connection if any
 * resolved address is not public, and hands the socket the very address it checked: there is no second
 * lookup for a DNS-rebinding answer to slip into. The resolver is a parameter so that tests can give
 * answers no real resolver gives on demand (a public and a private address for one name).
 */
export function guardedLookupWith(
  resolve: ResolveAll,
): (hostname: string, options: LookupOptions, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const entry of addresses) {
        const reason = blockedAddressReason(entry.address);
        if (reason) return callback(new BlockedAddressError(hostname, entry.address, reason), []);
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** guardedLookup over the system resolver: the `lookup` of every guarded agent. */
export const guardedLookup = guardedLookupWith(dnsLookup);
