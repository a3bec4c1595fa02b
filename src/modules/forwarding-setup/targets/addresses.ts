import { lookup as dnsLookup, LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * SSRF guard: only globally routable unicast addresses may be forwarded to. IPv4 goes by ipaddr.js's
 * classification: loopback, private, link-local (169.254.169.254, the cloud metadata service),
 * carrier-grade NAT, multicast, unspecified, broadcast and reserved are refused. IPv6 goes by an
 * allow-list, IPV6_RANGES: an address passes only inside global unicast 2000::/3 and outside every
 * refused range there, so a range nobody listed is refused rather than passed. An IPv4-mapped address
 * (::ffff:a.b.c.d) is judged as its IPv4 address, since the socket connects to exactly that; every other
 * form that embeds an IPv4 address (IPv4-compatible, NAT64, IPv4-translated, 6to4, Teredo, ISATAP) is
 * refused whatever it embeds, since a gateway or translator would carry the connection to that IPv4
 * address, perhaps inside its own network. Returns the reason, or null when allowed.
 */
export function blockedAddressReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = parseAddress(address);
  } catch {
    return 'not an IP address';
  }
  if (parsed.kind() === 'ipv4') {
    const range = parsed.range();
    return range === 'unicast' ? null : (IPV4_RANGE_NAMES[range] ?? range);
  }
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return blockedAddressReason(v6.toIPv4Address().toString());
  const reason = ipv6RangeReason(v6);
  return reason ?? (isIsatap(v6) ? 'ISATAP' : null);
}

/**
 * ipaddr.parse, except for an IPv6 address written with a dotted IPv4 tail: ipaddr.js reads `::a.b.c.d`
 * as IPv4-mapped (`::ffff:a.b.c.d`), which would judge an IPv4-compatible address such as `::8.8.8.8` as
 * the public 8.8.8.8. RFC 4291 and the socket read it as `::808:808`, so the tail is turned into its two
 * hexadecimal groups first. A tail that is not four decimal octets is not an address.
 */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const tail = address.includes(':') ? /^(.*:)(\d[^:]*\.[^:]*)$/.exec(address) : null;
  if (!tail) return ipaddr.parse(address);
  if (!ipaddr.IPv4.isValidFourPartDecimal(tail[2])) throw new Error('not four decimal octets');
  const [a, b, c, d] = ipaddr.IPv4.parse(tail[2]).octets;
  return ipaddr.IPv6.parse(`${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`);
}

/** ipaddr.js's IPv4 range names, as people write them. */
const IPV4_RANGE_NAMES: Record<string, string> = {
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
};

/**
 * The IPv6 ranges the guard knows, after the IANA IPv6 Special-Purpose Address Registry: the reason for
 * refusing, or null for allowed. The most specific range that holds an address decides (order here does
 * not matter); an address in none of them is outside 2000::/3 and refused as reserved (::2, 4000::1,
 * 5f00::/16 …). Of the IETF protocol assignments (2001::/23) only the anycast and service addresses
 * that IANA marks globally reachable and that are locators, not identifiers, pass (decision 0114).
 * ::ffff:0:0/96 (IPv4-mapped, RFC 4291 §2.5.5.2) is not here: it is judged as its IPv4 address first.
 */
const IPV6_RANGES: readonly (readonly [cidr: string, reason: string | null, rfc: string])[] = [
  ['2000::/3', null, 'RFC 4291 §2.4, RFC 3587: global unicast'],
  ['::/128', 'unspecified', 'RFC 4291 §2.5.2'],
  ['::1/128', 'loopback', 'RFC 4291 §2.5.3'],
  ['::/96', 'IPv4-compatible', 'RFC 4291 §2.5.5.1'],
  ['::ffff:0:0:0/96', 'IPv4-translated', 'RFC 2765, RFC 6145'],
  ['64:ff9b::/96', 'NAT64', 'RFC 6052'],
  ['64:ff9b:1::/48', 'NAT64', 'RFC 8215'],
  ['100::/64', 'discard-only', 'RFC 6666'],
  ['fc00::/7', 'unique-local', 'RFC 4193'],
  ['fe80::/10', 'link-local', 'RFC 4291 §2.5.6'],
  ['fec0::/10', 'site-local', 'RFC 3879'],
  ['ff00::/8', 'multicast', 'RFC 4291 §2.7'],
  ['2001::/23', 'IETF protocol assignment', 'RFC 2928'],
  ['2001::/32', 'Teredo', 'RFC 4380'],
  ['2001:1::1/128', null, 'RFC 7723: Port Control Protocol anycast'],
  ['2001:1::2/128', null, 'RFC 8155: TURN anycast'],
  ['2001:1::3/128', null, 'RFC 9665: DNS-SD service registration anycast'],
  ['2001:2::/48', 'benchmarking', 'RFC 5180'],
  ['2001:3::/32', null, 'RFC 7450: AMT'],
  ['2001:4:112::/48', null, 'RFC 7535: AS112-v6'],
  ['2001:10::/28', 'ORCHID', 'RFC 4843'],
  ['2001:20::/28', 'ORCHIDv2', 'RFC 7343'],
  ['2001:db8::/32', 'documentation', 'RFC 3849'],
  ['2002::/16', '6to4', 'RFC 3056'],
  ['3fff::/20', 'documentation', 'RFC 9637'],
];

/** IPV6_RANGES parsed, most specific first, so that the first range holding an address decides. */
const IPV6_TABLE = IPV6_RANGES.map(([cidr, reason]) => ({ cidr: ipaddr.IPv6.parseCIDR(cidr), reason })).sort(
  (a, b) => b.cidr[1] - a.cidr[1],
);

function ipv6RangeReason(address: ipaddr.IPv6): string | null {
  const range = IPV6_TABLE.find(({ cidr }) => address.match(cidr));
  return range ? range.reason : 'reserved';
}

/**
 * ISATAP (RFC 5214 §6.1) embeds an IPv4 address in the interface identifier of any prefix:
 * `…:0:5efe:a.b.c.d` or `…:200:5efe:a.b.c.d`, which the site's ISATAP router tunnels to.
 */
function isIsatap(address: ipaddr.IPv6): boolean {
  const [, , , , high, low] = address.parts;
  return (high === 0 || high === 0x200) && low === 0x5efe;
}

/** "a loopback address", "an IPv4-compatible address": a refusal reason as the messages write it. */
export function addressKind(reason: string): string {
  return `${/^(?:[aeio]|un(?!i))/i.test(reason) ? 'an' : 'a'} ${reason} address`;
}

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
